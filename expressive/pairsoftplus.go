package expressive

import (
	"fmt"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/ops"
)

// pairSoftplusSum adds y[i, s] = sum_j softplus(a[i, j] - c[i, s]) to the graph of a and
// c: for every row i, the softplus of each entry of row i of a minus each entry of row i
// of c, summed over the entries of a. It is a float64 Gorgonia op with a hand-written
// backward, da[i, j] = sum_s dy[i, s] sigmoid(a[i, j] - c[i, s]) and dc[i, s] =
// -dy[i, s] sum_j sigmoid(a[i, j] - c[i, s]), that never materialises the (L, K, N)
// differences (see lossGraph). Softplus and sigmoid are evaluated without overflow, and
// rows are shared among GOMAXPROCS goroutines. // a: (L, N); c: (L, K); y: (L, K)
func pairSoftplusSum(a, c *G.Node) (*G.Node, error) {
	if a.Dims() != 2 || c.Dims() != 2 || a.Shape()[0] != c.Shape()[0] {
		return nil, fmt.Errorf("expressive: pairSoftplusSum of %v and %v, want (L, N) and (L, K)", a.Shape(), c.Shape())
	}
	if a.Dtype() != tensor.Float64 || c.Dtype() != tensor.Float64 {
		return nil, fmt.Errorf("expressive: pairSoftplusSum of %v and %v, want float64", a.Dtype(), c.Dtype())
	}
	return G.ApplyOp(newPairSoftplusOp(pairValue), a, c)
}

// What a pairSoftplusOp computes.
const (
	pairValue = iota // y from (a, c)
	pairGradA        // da from (a, c, dy)
	pairGradC        // dc from (a, c, dy)
)

// pairSoftplusOp is the op of pairSoftplusSum (part pairValue) and its two gradients.
type pairSoftplusOp struct {
	*ops.OpBase
	part int
}

func newPairSoftplusOp(part int) pairSoftplusOp {
	return pairSoftplusOp{ops.NewOpBase([...]string{"PairSoftplusSum", "PairSoftplusSumGradA", "PairSoftplusSumGradC"}[part]), part}
}

// Arity is 2 (a, c), or 3 (a, c, dy) for a gradient.
func (op pairSoftplusOp) Arity() int {
	if op.part == pairValue {
		return 2
	}
	return 3
}

// Type maps matrices to a matrix of the same element type.
func (op pairSoftplusOp) Type() hm.Type {
	m := G.TensorType{Dims: 2, Of: hm.TypeVariable('a')}
	if op.part == pairValue {
		return hm.NewFnType(m, m, m)
	}
	return hm.NewFnType(m, m, m, m)
}

// InferShape is (L, K) for the value and dc, (L, N) for da.
func (op pairSoftplusOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	a, okA := in[0].(tensor.Shape)
	c, okC := in[1].(tensor.Shape)
	if !okA || !okC || a.Dims() != 2 || c.Dims() != 2 || a[0] != c[0] {
		return nil, fmt.Errorf("expressive: %v: input shapes %v and %v, want (L, N) and (L, K)", op, in[0], in[1])
	}
	if op.part == pairGradA {
		return a.Clone(), nil
	}
	return c.Clone(), nil
}

// Do computes into a new tensor.
func (op pairSoftplusOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

// UsePreallocDo computes into prealloc when it fits and shares no memory with an input.
func (op pairSoftplusOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	if len(in) != op.Arity() {
		return nil, fmt.Errorf("expressive: %v: %d inputs, want %d", op, len(in), op.Arity())
	}
	xs := make([][]float64, len(in))
	shapes := make([]G.DimSizer, len(in))
	for i, v := range in {
		d, ok := v.(*tensor.Dense)
		if !ok || d.Dtype() != tensor.Float64 {
			return nil, fmt.Errorf("expressive: %v: input %d is %T, want a float64 tensor", op, i, v)
		}
		xs[i], shapes[i] = d.Float64s(), d.Shape()
	}
	shape, err := op.InferShape(shapes...)
	if err != nil {
		return nil, err
	}
	a, c := shapes[0].(tensor.Shape), shapes[1].(tensor.Shape)
	if op.part != pairValue && !shapes[2].(tensor.Shape).Eq(c) {
		return nil, fmt.Errorf("expressive: %v: output gradient %v, want %v", op, shapes[2], c)
	}
	y := op.Output(prealloc, tensor.Float64, shape, in)
	out := y.Float64s()
	N, K := a[1], c[1]
	ops.ParallelFor(a[0], N*K, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			op.row(i, xs, out, N, K)
		}
	})
	return y, nil
}

// row computes row i of the op's output out from the inputs xs, for rows of N logits and
// K support entries.
func (op pairSoftplusOp) row(i int, xs [][]float64, out []float64, N, K int) {
	ar, cr := xs[0][i*N:(i+1)*N], xs[1][i*K:(i+1)*K] // (N,), (K,)
	switch op.part {
	case pairValue:
		yr := out[i*K : (i+1)*K] // (K,)
		for s, cs := range cr {
			var sum float64
			for _, v := range ar {
				sum += softplusOf(v - cs)
			}
			yr[s] = sum
		}
	case pairGradA:
		dy, da := xs[2][i*K:(i+1)*K], out[i*N:(i+1)*N] // (K,), (N,)
		clear(da)
		for s, cs := range cr {
			for j, v := range ar {
				da[j] += dy[s] * sigmoid(v-cs)
			}
		}
	case pairGradC:
		dy, dc := xs[2][i*K:(i+1)*K], out[i*K:(i+1)*K] // (K,), (K,)
		for s, cs := range cr {
			var sum float64
			for _, v := range ar {
				sum += sigmoid(v - cs)
			}
			dc[s] = -dy[s] * sum
		}
	}
}

// DiffWRT is true for a and c.
func (op pairSoftplusOp) DiffWRT(int) []bool { return []bool{true, true} }

// SymDiff returns the gradient ops of a and c; they have no derivatives of their own.
func (op pairSoftplusOp) SymDiff(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	if op.part != pairValue {
		return nil, fmt.Errorf("expressive: %v: second derivatives are not implemented", op)
	}
	da, err := G.ApplyOp(newPairSoftplusOp(pairGradA), in[0], in[1], grad)
	if err != nil {
		return nil, err
	}
	dc, err := G.ApplyOp(newPairSoftplusOp(pairGradC), in[0], in[1], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{da, dc}, nil
}

// softplusOf is softplus(x) = log(1 + e^x) = max(x, 0) + log(1 + e^-|x|), without
// overflow. For e^-|x| < 2^-53, log(1 + e^-|x|) rounds to e^-|x| and is not evaluated.
func softplusOf(x float64) float64 {
	e := math.Exp(-math.Abs(x))
	if e >= 0x1p-53 {
		e = math.Log1p(e)
	}
	if x > 0 {
		return x + e
	}
	return e
}

// sigmoid is 1 / (1 + e^-x), the derivative of softplus, without overflow.
func sigmoid(x float64) float64 {
	e := math.Exp(-math.Abs(x))
	if x >= 0 {
		return 1 / (1 + e)
	}
	return e / (1 + e)
}
