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
// (packed, dout) to dpacked and recomputes P rather than keeping it between the passes.
type attentionOp struct {
	baseOp
	spec AttentionSpec
	grad bool
	ws   workspace // one (sequence, head) job's work space per worker
}

func newAttentionOp(spec AttentionSpec, grad bool) *attentionOp {
	name := fmt.Sprintf("Attention{%v,H=%d,T=%d,causal=%t}", spec.Kind, spec.Heads, spec.SeqLen, spec.Causal)
	if grad {
		name += "Grad"
	}
	return &attentionOp{baseOp: baseOp{name: name}, spec: spec, grad: grad}
}

// Arity is 1 for the forward op and 2 (packed, dout) for the backward.
func (op *attentionOp) Arity() int {
	if op.grad {
		return 2
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
			runJobs(geo, &op.ws, func(s []float32, b, h int) { attnForward(geo, s, data[float32](packed), data[float32](out), b, h) })
		case tensor.Float64:
			runJobs(geo, &op.ws, func(s []float64, b, h int) { attnForward(geo, s, data[float64](packed), data[float64](out), b, h) })
		}
		return out, nil
	}
	dout, err := dense(op.name, in, 1)
	if err != nil {
		return nil, err
	}
	dp := op.out.get(prealloc, packed.Dtype(), packed.Shape(), in)
	switch packed.Dtype() {
	case tensor.Float32:
		runJobs(geo, &op.ws, func(s []float32, b, h int) {
			attnBackward(geo, s, data[float32](packed), data[float32](dout), data[float32](dp), b, h)
		})
	case tensor.Float64:
		runJobs(geo, &op.ws, func(s []float64, b, h int) {
			attnBackward(geo, s, data[float64](packed), data[float64](dout), data[float64](dp), b, h)
		})
	}
	return dp, nil
}

// DiffWRT is true for the packed input.
func (op *attentionOp) DiffWRT(int) []bool { return []bool{true} }

// SymDiff applies the backward op to (packed, dout).
func (op *attentionOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	d, err := G.ApplyOp(newAttentionOp(op.spec, true), in[0], grad)
	return G.Nodes{d}, err
}
