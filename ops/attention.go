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
// (packed, out, dout) to dpacked. The backward takes the forward's output out only so that
// it runs after the forward of the same step: it reuses the P the forward kept (keep, set
// when the forward is differentiated), and recomputes P when that is missing or was
// computed from another input. With a position bias every op also takes the bias after
// packed, and the bias gradient (biasGrad) maps (packed, bias, out, dout, dpacked) to
// dbias (H, T): the packed backward, which it runs after, leaves it in the forward op's
// dbias.
type attentionOp struct {
	baseOp
	spec     AttentionSpec
	grad     bool
	biasGrad bool
	ws       kernel.Workspace // one (sequence, head) job's work space per worker
	keep     bool             // forward: keep P in probs for the backward
	probs    keptProbs        // forward: P of the last run when keep
	fwd      *attentionOp     // backward: the forward op whose kept P it reads
	dbias    []float64        // forward: (B*H, T) per-job bias gradients of the last backward
	dbiasOf  uintptr          // forward: the address of the dpacked output that backward wrote with them
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

// biasGradient sums the per-job bias gradients the packed backward left in the forward
// op, over the sequences of the batch, into a new (H, L) tensor (0 beyond T).
func (op *attentionOp) biasGradient(prealloc G.Value, dt tensor.Dtype, in []G.Value) (G.Value, error) {
	h, t, l := op.spec.Heads, op.spec.SeqLen, op.spec.BiasLen
	dp, err := dense(op.name, in, 4)
	if err != nil {
		return nil, err
	}
	jobs := op.fwd.dbias
	if op.fwd.dbiasOf != dp.Uintptr() || len(jobs)%(h*t) != 0 || len(jobs) == 0 {
		return nil, fmt.Errorf("%s: the bias sums were not written by the backward this gradient follows", op.name)
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
	bg := newAttentionOp(op.spec, true)
	bg.biasGrad, bg.fwd, bg.name = true, op, bg.name+"Bias"
	db, err := G.ApplyOp(bg, in[0], in[1], out, grad, d)
	return G.Nodes{d, db}, err
}

// backward returns the backward op of the forward op op and has op keep P for it.
func (op *attentionOp) backward() *attentionOp {
	back := newAttentionOp(op.spec, true)
	back.fwd, op.keep = op, true
	return back
}

// attnForwardJobs runs the forward of every (sequence, head) job of op, writing P into
// op.probs when op.keep and into the workers' scratch otherwise.
func attnForwardJobs[T kernel.Float](op *attentionOp, g attnGeometry, packed *tensor.Dense, in []G.Value, out *tensor.Dense) error {
	bias, err := biasOf[T](op, in)
	if err != nil {
		return err
	}
	var kept []T
	if op.keep {
		kept = resetProbs[T](&op.probs, g)
	}
	x, y := data[T](packed), data[T](out) // Data allocates: once, not per job
	runJobs(g, &op.ws, func(s []T, b, h int) {
		p, _, nq, nk := attnScratch(g, s)
		if kept != nil {
			p = jobProbs(g, kept, b, h)
		}
		attnForward(g, p, nq, nk, x, bias, y, b, h)
	})
	if op.keep {
		op.probs.set(packed, op.biasAddr(in))
	}
	return nil
}

// attnBackwardJobs runs the backward of every (sequence, head) job of op into dp, with
// the P its forward kept for packed, or else P recomputed in the workers' scratch.
// With a bias, the per-job bias gradients go to the forward op's dbias.
func attnBackwardJobs[T kernel.Float](op *attentionOp, g attnGeometry, packed *tensor.Dense, in []G.Value, dout, dp *tensor.Dense) error {
	bias, err := biasOf[T](op, in)
	if err != nil {
		return err
	}
	var kept []T
	if op.fwd != nil {
		kept = keptProbsOf[T](&op.fwd.probs, g, packed, op.biasAddr(in))
	}
	var dbias []float64
	if bias != nil {
		t, n := g.spec.SeqLen, g.batch*g.spec.Heads
		if cap(op.fwd.dbias) < n*t {
			op.fwd.dbias = make([]float64, n*t)
		}
		dbias = op.fwd.dbias[:n*t]
		op.fwd.dbias, op.fwd.dbiasOf = dbias, dp.Uintptr()
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
	return nil
}

// keptProbs is the P of every (sequence, head) job of a forward op's last run, (B*H, T, T),
// with the input it was computed from: the address, dtype and shape of the packed tensor,
// and the address of the position bias (0 without one).
// Within a step the backward runs after the forward (it takes the forward's output), and
// the packed input is not written in between, so a matching key means P is current.
type keptProbs struct {
	ws    kernel.Workspace
	src   uintptr // 0 while P is being written or before the first run
	bias  uintptr
	dt    tensor.Dtype
	shape [2]int
}

// resetProbs marks k as not yet written and returns its buffer for P of the jobs of g.
func resetProbs[T kernel.Float](k *keptProbs, g attnGeometry) []T {
	k.src = 0
	return kernel.Scratch[T](&k.ws, 1, g.probsLen())[0]
}

// set records packed as the input of the P just written.
func (k *keptProbs) set(packed *tensor.Dense, bias uintptr) {
	s := packed.Shape()
	k.src, k.dt, k.shape, k.bias = packed.Uintptr(), packed.Dtype(), [2]int{s[0], s[1]}, bias
}

// keptProbsOf returns the P k holds if it was computed from packed and the same bias, else
// nil.
func keptProbsOf[T kernel.Float](k *keptProbs, g attnGeometry, packed *tensor.Dense, bias uintptr) []T {
	s := packed.Shape()
	if k.src == 0 || k.src != packed.Uintptr() || k.dt != packed.Dtype() || k.shape != [2]int{s[0], s[1]} || k.bias != bias {
		return nil
	}
	return kernel.Scratch[T](&k.ws, 1, g.probsLen())[0]
}

// biasAddr is the address of the bias input (the second) of an op with a position bias,
// or 0.
func (op *attentionOp) biasAddr(in []G.Value) uintptr {
	if !op.spec.Bias {
		return 0
	}
	if b, ok := in[1].(*tensor.Dense); ok {
		return b.Uintptr()
	}
	return 0
}
