package ops

import (
	"fmt"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
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
}

// Attention is multihead self-attention on packed projections: packed is (B*T, k*D) with
// row b*T+t holding [q | k | v] (k = 3) or, for tied L2, [q | v] (k = 2), head h in
// columns h*d..(h+1)*d of each block. Per sequence and head, P = softmax(logits) and the
// output rows are P v_h, written to columns h*d..(h+1)*d of the (B*T, D) result: the heads
// are concatenated, ready for the output projection. No transposed copy is made.
func Attention(packed *G.Node, spec AttentionSpec) (*G.Node, error) {
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
	return G.ApplyOp(newAttentionOp(spec, false), packed)
}

// attentionOp is the forward op of Attention, or (grad) its backward, which maps
// (packed, out, dout) to dpacked. The backward takes the forward's output out only so that
// it runs after the forward of the same step: it reuses the P the forward kept (keep, set
// when the forward is differentiated), and recomputes P when that is missing or was
// computed from another input.
type attentionOp struct {
	baseOp
	spec  AttentionSpec
	grad  bool
	ws    workspace    // one (sequence, head) job's work space per worker
	keep  bool         // forward: keep P in probs for the backward
	probs keptProbs    // forward: P of the last run when keep
	fwd   *attentionOp // backward: the forward op whose kept P it reads
}

func newAttentionOp(spec AttentionSpec, grad bool) *attentionOp {
	name := fmt.Sprintf("Attention{%v,H=%d,T=%d,causal=%t}", spec.Kind, spec.Heads, spec.SeqLen, spec.Causal)
	if grad {
		name += "Grad"
	}
	return &attentionOp{baseOp: baseOp{name: name}, spec: spec, grad: grad}
}

// Arity is 1 for the forward op and 3 (packed, out, dout) for the backward.
func (op *attentionOp) Arity() int {
	if op.grad {
		return 3
	}
	return 1
}

// Type maps matrices to a matrix of the same type.
func (op *attentionOp) Type() hm.Type { return sameType(op.Arity()) }

// InferShape is (B*T, D) forward and the packed shape backward.
func (op *attentionOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s := in[0].(tensor.Shape)
	if op.grad {
		return s.Clone(), nil
	}
	return tensor.Shape{s[0], s[1] / op.spec.Kind.blocks()}, nil
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
	if !op.grad {
		out := op.out.get(prealloc, packed.Dtype(), tensor.Shape{geo.rows(), geo.width}, in)
		switch packed.Dtype() {
		case tensor.Float32:
			attnForwardJobs[float32](op, geo, packed, out)
		case tensor.Float64:
			attnForwardJobs[float64](op, geo, packed, out)
		}
		return out, nil
	}
	dout, err := dense(op.name, in, 2)
	if err != nil {
		return nil, err
	}
	dp := op.out.get(prealloc, packed.Dtype(), packed.Shape(), in)
	switch packed.Dtype() {
	case tensor.Float32:
		attnBackwardJobs[float32](op, geo, packed, dout, dp)
	case tensor.Float64:
		attnBackwardJobs[float64](op, geo, packed, dout, dp)
	}
	return dp, nil
}

// DiffWRT is true for the packed input.
func (op *attentionOp) DiffWRT(int) []bool { return []bool{true} }

// SymDiff applies the backward op to (packed, out, dout).
func (op *attentionOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	d, err := G.ApplyOp(op.backward(), in[0], out, grad)
	return G.Nodes{d}, err
}

// backward returns the backward op of the forward op op and has op keep P for it.
func (op *attentionOp) backward() *attentionOp {
	back := newAttentionOp(op.spec, true)
	back.fwd, op.keep = op, true
	return back
}

// attnForwardJobs runs the forward of every (sequence, head) job of op, writing P into
// op.probs when op.keep and into the workers' scratch otherwise.
func attnForwardJobs[T Float](op *attentionOp, g attnGeometry, packed, out *tensor.Dense) {
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
		attnForward(g, p, nq, nk, x, y, b, h)
	})
	if op.keep {
		op.probs.set(packed)
	}
}

// attnBackwardJobs runs the backward of every (sequence, head) job of op into dp, with
// the P its forward kept for packed, or else P recomputed in the workers' scratch.
func attnBackwardJobs[T Float](op *attentionOp, g attnGeometry, packed, dout, dp *tensor.Dense) {
	var kept []T
	if op.fwd != nil {
		kept = keptProbsOf[T](&op.fwd.probs, g, packed)
	}
	x, dy, dx := data[T](packed), data[T](dout), data[T](dp) // Data allocates: once, not per job
	runJobs(g, &op.ws, func(s []T, b, h int) {
		p, ds, r, c := attnScratch(g, s)
		if kept != nil {
			p = jobProbs(g, kept, b, h)
		} else {
			attnProbs(g, p, r, c, x, b, h)
		}
		attnBackward(g, p, ds, r, c, x, dy, dx, b, h)
	})
}

// keptProbs is the P of every (sequence, head) job of a forward op's last run, (B*H, T, T),
// with the input it was computed from: the address, dtype and shape of the packed tensor.
// Within a step the backward runs after the forward (it takes the forward's output), and
// the packed input is not written in between, so a matching key means P is current.
type keptProbs struct {
	ws    workspace
	src   uintptr // 0 while P is being written or before the first run
	dt    tensor.Dtype
	shape [2]int
}

// resetProbs marks k as not yet written and returns its buffer for P of the jobs of g.
func resetProbs[T Float](k *keptProbs, g attnGeometry) []T {
	k.src = 0
	return scratch[T](&k.ws, 1, g.probsLen())[0]
}

// set records packed as the input of the P just written.
func (k *keptProbs) set(packed *tensor.Dense) {
	s := packed.Shape()
	k.src, k.dt, k.shape = packed.Uintptr(), packed.Dtype(), [2]int{s[0], s[1]}
}

// keptProbsOf returns the P k holds if it was computed from packed, else nil.
func keptProbsOf[T Float](k *keptProbs, g attnGeometry, packed *tensor.Dense) []T {
	s := packed.Shape()
	if k.src == 0 || k.src != packed.Uintptr() || k.dt != packed.Dtype() || k.shape != [2]int{s[0], s[1]} {
		return nil
	}
	return scratch[T](&k.ws, 1, g.probsLen())[0]
}
