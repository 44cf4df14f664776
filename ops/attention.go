package ops

import (
	"fmt"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/kernel"
)

// AttentionKind selects the logits of an attention op.
type AttentionKind int

const (
	// DotProduct logits: q_i . k_j / sqrt(d). Input [q | k | v].
	DotProduct AttentionKind = iota
	// L2 logits with keys tied to queries: -||q_i - q_j||^2 / sqrt(d). Input [q | v].
	L2
	// L2Untied logits with a separate key map: -||q_i - k_j||^2 / sqrt(d). Input [q | k | v].
	L2Untied
)

// String names the kind.
func (k AttentionKind) String() string {
	switch k {
	case DotProduct:
		return "dp"
	case L2:
		return "l2"
	case L2Untied:
		return "l2-untied"
	}
	return fmt.Sprintf("AttentionKind(%d)", int(k))
}

// blocks is the number of D-wide blocks of the packed input: 2 for tied L2, 3 otherwise.
func (k AttentionKind) blocks() int {
	if k == L2 {
		return 2
	}
	return 3
}

// AttentionSpec describes a multihead attention op.
type AttentionSpec struct {
	Kind   AttentionKind
	Heads  int  // H; the head width is d = D/H
	SeqLen int  // T, the length of every sequence of the batch
	Causal bool // row i attends to j <= i, always including i
	// Bias (causal only): the op takes a second input, a position bias (H, BiasLen >= T)
	// whose entry [h, i-j] is added to head h's logit of row i, column j.
	Bias    bool
	BiasLen int
}

// Attention is multihead self-attention on packed projections: packed is (B*T, k*D) with
// row b*T+t holding [q | k | v] (k = 3) or, for tied L2, [q | v] (k = 2), head h in
// columns h*d..(h+1)*d of each block. Per sequence and head, P = softmax(logits) and the
// output rows are P v_h, written to columns h*d..(h+1)*d of the (B*T, D) result: the heads
// are concatenated, ready for the output projection. No transposed copy is made.
func Attention(packed *G.Node, spec AttentionSpec) (*G.Node, error) {
	if spec.Bias {
		return nil, fmt.Errorf("attention: a spec with a position bias needs AttentionBiased")
	}
	return attention(packed, nil, spec)
}

// AttentionBiased is Attention with a position bias (H, L) of the same dtype added to the
// logits, L >= T: head h's logit of row i and column j <= i gains bias[h, i-j]. Causal
// only.
func AttentionBiased(packed, bias *G.Node, spec AttentionSpec) (*G.Node, error) {
	spec.Bias = true
	if !spec.Causal {
		return nil, fmt.Errorf("attention: a position bias needs causal attention")
	}
	if s := bias.Shape(); s.Dims() != 2 || s[0] != spec.Heads || s[1] < spec.SeqLen || bias.Dtype() != packed.Dtype() {
		return nil, fmt.Errorf("attention: position bias %v of %v, want (%d, >= %d) of %v", s, bias.Dtype(), spec.Heads, spec.SeqLen, packed.Dtype())
	}
	spec.BiasLen = bias.Shape()[1]
	return attention(packed, bias, spec)
}

// attention checks the packed input and applies the op to packed and, with spec.Bias, bias.
func attention(packed, bias *G.Node, spec AttentionSpec) (*G.Node, error) {
	s := packed.Shape()
	k := spec.Kind.blocks()
	if spec.Kind < DotProduct || spec.Kind > L2Untied {
		return nil, fmt.Errorf("attention: unknown kind %v", spec.Kind)
	}
	if s.Dims() != 2 || s[1]%k != 0 {
		return nil, fmt.Errorf("attention %v: packed input %v, want (B*T, %d*D)", spec.Kind, s, k)
	}
	d := s[1] / k
	if spec.Heads < 1 || d%spec.Heads != 0 {
		return nil, fmt.Errorf("attention: width %d is not a multiple of %d heads", d, spec.Heads)
	}
	if spec.SeqLen < 1 || s[0]%spec.SeqLen != 0 {
		return nil, fmt.Errorf("attention: %d rows are not a whole number of sequences of length %d", s[0], spec.SeqLen)
	}
	if err := checkFloat("attention", packed.Dtype()); err != nil {
		return nil, err
	}
	if spec.Bias {
		return G.ApplyOp(newAttentionOp(spec, false), packed, bias)
	}
	return G.ApplyOp(newAttentionOp(spec, false), packed)
}

// attentionOp is the forward op of Attention, or (grad) its backward, which maps
// (packed, out, dout) to dpacked. A differentiated forward op shares an attnState with the
// ops of its gradient (see saved): it keeps P there, and the backward, which takes the
// forward's output out so that it runs after the forward of the same run, reuses P if the
// forward wrote it since the backward's last run and recomputes it otherwise. With a
// position bias every op also takes the bias after packed, and the bias gradient
// (biasGrad) maps (packed, bias, out, dout, dpacked) to dbias (H, L): the packed backward,
// which it runs after, leaves the per-job sums in the shared state.
type attentionOp struct {
	baseOp
	spec     AttentionSpec
	grad     bool
	biasGrad bool
	ws       kernel.Workspace // one (sequence, head) job's work space per worker
	st       *attnState       // shared by a differentiated forward op and the ops of its gradient
	read     reader           // backward: the last P it took; bias gradient: the last sums
}

// attnState is what a forward attention op and the ops of its gradient share: P of every
// (sequence, head) job of the forward's last run, (B*H, T, T), with the dtype and shape of
// the packed input, and the per-job bias gradients (B*H, T) of the backward's last run.
type attnState struct {
	probs  kernel.Workspace
	pDone  saved
	dt     tensor.Dtype
	shape  [2]int
	dbias  []float64
	dbDone saved
}

func newAttentionOp(spec AttentionSpec, grad bool) *attentionOp {
	name := fmt.Sprintf("Attention{%v,H=%d,T=%d,causal=%t,bias=%t}", spec.Kind, spec.Heads, spec.SeqLen, spec.Causal, spec.Bias)
	if grad {
		name += "Grad"
	}
	return &attentionOp{baseOp: baseOp{name: name}, spec: spec, grad: grad}
}

// Arity is 1 for the forward op and 3 (packed, out, dout) for the backward, plus the bias;
// the bias gradient takes 5.
func (op *attentionOp) Arity() int {
	n := 1
	if op.grad {
		n = 3
	}
	if op.spec.Bias {
		n++
	}
	if op.biasGrad {
		n++
	}
	return n
}

// Type maps matrices to a matrix of the same type.
func (op *attentionOp) Type() hm.Type { return sameType(op.Arity()) }

// InferShape is (B*T, D) forward, the packed shape backward, and (H, T) for the bias
// gradient.
func (op *attentionOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s := in[0].(tensor.Shape)
	switch {
	case op.biasGrad:
		return tensor.Shape{op.spec.Heads, op.spec.BiasLen}, nil
	case op.grad:
		return s.Clone(), nil
	}
	return tensor.Shape{s[0], s[1] / op.spec.Kind.blocks()}, nil
}

// biasOf returns the bias input's data, or nil without a bias.
func biasOf[T kernel.Float](op *attentionOp, in []G.Value) ([]T, error) {
	if !op.spec.Bias {
		return nil, nil
	}
	b, err := dense(op.name, in, 1)
	if err != nil {
		return nil, err
	}
	return data[T](b), nil
}

// Do runs the op into a new tensor.
func (op *attentionOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

// UsePreallocDo runs the op into prealloc when it fits.
func (op *attentionOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	packed, err := dense(op.name, in, 0)
	if err != nil {
		return nil, err
	}
	geo := newAttnGeometry(op.spec, packed.Shape())
	if op.biasGrad {
		return op.biasGradient(prealloc, packed.Dtype(), in)
	}
	extra := 0 // the bias input shifts out and dout
	if op.spec.Bias {
		extra = 1
	}
	if !op.grad {
		out := op.out.get(prealloc, packed.Dtype(), tensor.Shape{geo.rows(), geo.width}, in)
		switch packed.Dtype() {
		case tensor.Float32:
			err = attnForwardJobs[float32](op, geo, packed, in, out)
		case tensor.Float64:
			err = attnForwardJobs[float64](op, geo, packed, in, out)
		}
		return out, err
	}
	dout, err := dense(op.name, in, 2+extra)
	if err != nil {
		return nil, err
	}
	dp := op.out.get(prealloc, packed.Dtype(), packed.Shape(), in)
	switch packed.Dtype() {
	case tensor.Float32:
		err = attnBackwardJobs[float32](op, geo, packed, in, dout, dp)
	case tensor.Float64:
		err = attnBackwardJobs[float64](op, geo, packed, in, dout, dp)
	}
	return dp, err
}

// biasGradient sums the per-job bias gradients the packed backward left in the shared
// state, over the sequences of the batch, into a new (H, L) tensor (0 beyond T). It fails
// unless that backward wrote them since this op's last run.
func (op *attentionOp) biasGradient(prealloc G.Value, dt tensor.Dtype, in []G.Value) (G.Value, error) {
	h, t, l := op.spec.Heads, op.spec.SeqLen, op.spec.BiasLen
	if op.st == nil || !op.read.take(&op.st.dbDone) {
		return nil, fmt.Errorf("%s: the backward this gradient follows has not written the bias sums of this run", op.name)
	}
	jobs := op.st.dbias
	if len(jobs)%(h*t) != 0 || len(jobs) == 0 {
		return nil, fmt.Errorf("%s: %d bias sums, want a positive multiple of H*T = %d", op.name, len(jobs), h*t)
	}
	out := op.out.get(prealloc, dt, tensor.Shape{h, l}, in)
	sum := make([]float64, h*l)
	for j := 0; j*t < len(jobs); j++ {
		hd := j % h
		for k, v := range jobs[j*t : (j+1)*t] {
			sum[hd*l+k] += v
		}
	}
	switch d := out.Data().(type) {
	case []float32:
		for i, v := range sum {
			d[i] = float32(v)
		}
	case []float64:
		copy(d, sum)
	}
	return out, nil
}

// DiffWRT is true for the packed input and the bias.
func (op *attentionOp) DiffWRT(n int) []bool {
	if op.spec.Bias {
		return []bool{true, true}
	}
	return []bool{true}
}

// SymDiff applies the backward op to (packed, [bias,] out, dout), and the bias gradient
// after it.
func (op *attentionOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	back := op.backward()
	if !op.spec.Bias {
		d, err := G.ApplyOp(back, in[0], out, grad)
		return G.Nodes{d}, err
	}
	d, err := G.ApplyOp(back, in[0], in[1], out, grad)
	if err != nil {
		return nil, err
	}
	db, err := G.ApplyOp(op.biasGradOp(), in[0], in[1], out, grad, d)
	return G.Nodes{d, db}, err
}

// backward returns the backward op of the forward op op, sharing op's state, in which op
// then keeps P.
func (op *attentionOp) backward() *attentionOp {
	back := newAttentionOp(op.spec, true)
	back.st = op.state()
	return back
}

// biasGradOp returns the bias gradient op of the forward op op, sharing op's state.
func (op *attentionOp) biasGradOp() *attentionOp {
	bg := newAttentionOp(op.spec, true)
	bg.biasGrad, bg.st, bg.name = true, op.state(), bg.name+"Bias"
	return bg
}

// state returns the state op shares with the ops of its gradient, making it on first use.
func (op *attentionOp) state() *attnState {
	if op.st == nil {
		op.st = &attnState{}
	}
	return op.st
}

// attnForwardJobs runs the forward of every (sequence, head) job of op, writing P into
// the shared state when op has one (it is differentiated) and into the workers' scratch
// otherwise.
func attnForwardJobs[T kernel.Float](op *attentionOp, g attnGeometry, packed *tensor.Dense, in []G.Value, out *tensor.Dense) error {
	st := op.st
	if st != nil {
		st.pDone.begin()
	}
	bias, err := biasOf[T](op, in)
	if err != nil {
		return err
	}
	var kept []T
	if st != nil {
		kept = kernel.Scratch[T](&st.probs, 1, g.probsLen())[0]
	}
	x, y := data[T](packed), data[T](out) // Data allocates: once, not per job
	runJobs(g, &op.ws, func(s []T, b, h int) {
		p, _, nq, nk := attnScratch(g, s)
		if kept != nil {
			p = jobProbs(g, kept, b, h)
		}
		attnForward(g, p, nq, nk, x, bias, y, b, h)
	})
	if st != nil {
		s := packed.Shape()
		st.dt, st.shape = packed.Dtype(), [2]int{s[0], s[1]}
		st.pDone.done()
	}
	return nil
}

// attnBackwardJobs runs the backward of every (sequence, head) job of op into dp, with
// the P its forward kept in this run, or else P recomputed in the workers' scratch.
// With a bias, the per-job bias gradients go to the shared state.
func attnBackwardJobs[T kernel.Float](op *attentionOp, g attnGeometry, packed *tensor.Dense, in []G.Value, dout, dp *tensor.Dense) error {
	if op.spec.Bias && op.st == nil { // a backward op of its own: its bias sums go unread
		op.st = &attnState{}
	}
	st := op.st
	if op.spec.Bias {
		st.dbDone.begin()
	}
	bias, err := biasOf[T](op, in)
	if err != nil {
		return err
	}
	var kept []T
	if s := packed.Shape(); st != nil && op.read.take(&st.pDone) && st.dt == packed.Dtype() && st.shape == [2]int{s[0], s[1]} {
		kept = kernel.Scratch[T](&st.probs, 1, g.probsLen())[0]
	}
	var dbias []float64
	if bias != nil {
		t, n := g.spec.SeqLen, g.batch*g.spec.Heads
		if cap(st.dbias) < n*t {
			st.dbias = make([]float64, n*t)
		}
		dbias = st.dbias[:n*t]
		st.dbias = dbias
		clear(dbias)
	}
	x, dy, dx := data[T](packed), data[T](dout), data[T](dp) // Data allocates: once, not per job
	runJobs(g, &op.ws, func(s []T, b, h int) {
		p, ds, r, c := attnScratch(g, s)
		if kept != nil {
			p = jobProbs(g, kept, b, h)
		} else {
			attnProbs(g, p, r, c, x, bias, b, h)
		}
		var jb []float64
		if dbias != nil {
			t := g.spec.SeqLen
			j := b*g.spec.Heads + h
			jb = dbias[j*t : (j+1)*t]
		}
		attnBackward(g, p, ds, r, c, x, dy, dx, jb, b, h)
	})
	if bias != nil {
		st.dbDone.done()
	}
	return nil
}
