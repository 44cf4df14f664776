package ops

import (
	"fmt"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/kernel"
)

// CrossEntropy is the mean negative log-likelihood, in nats, of integer targets under the
// softmax of logits: logits (N, V), targets an Int vector (N). Targets below zero are
// ignored (padding) and not counted in the mean; with no target left the loss is 0. The
// log-softmax is fused and max-shifted, so logits of any magnitude give a finite loss.
func CrossEntropy(logits, targets *G.Node) (*G.Node, error) {
	if err := checkLogitsTargets("cross-entropy", logits, targets); err != nil {
		return nil, err
	}
	return G.ApplyOp(&xentOp{baseOp: baseOp{name: "CrossEntropy"}}, logits, targets)
}

// checkLogitsTargets returns an error naming op unless logits is a float (N, V) matrix and
// targets an Int vector of N.
func checkLogitsTargets(op string, logits, targets *G.Node) error {
	ls, ts := logits.Shape(), targets.Shape()
	if ls.Dims() != 2 {
		return fmt.Errorf("%s: logits %v, want (N, V)", op, ls)
	}
	if targets.Dtype() != tensor.Int || ts.TotalSize() != ls[0] || !ts.IsVectorLike() {
		return fmt.Errorf("%s: targets %v of %v, want an Int vector of %d", op, ts, targets.Dtype(), ls[0])
	}
	return checkFloat(op, logits.Dtype())
}

// xentOp is the forward op of CrossEntropy.
type xentOp struct {
	baseOp
	ws kernel.Workspace // the loss of each row
}

// Arity is 2: logits and targets.
func (op *xentOp) Arity() int { return 2 }

// Type maps a float matrix and an Int vector to a float scalar.
func (op *xentOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(G.TensorType{Dims: 2, Of: a}, G.TensorType{Dims: 1, Of: tensor.Int}, a)
}

// InferShape is a scalar.
func (op *xentOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return tensor.ScalarShape(), nil }

// Do computes the mean NLL.
func (op *xentOp) Do(in ...G.Value) (G.Value, error) {
	logits, targets, err := xentInputs(op.name, in)
	if err != nil {
		return nil, err
	}
	v := logits.Shape()[1]
	rowLoss := kernel.Scratch[float64](&op.ws, 1, len(targets))[0]
	var sum float64
	var count int
	switch logits.Dtype() {
	case tensor.Float32:
		sum, count, err = kernel.NLL(data[float32](logits), targets, v, rowLoss)
	case tensor.Float64:
		sum, count, err = kernel.NLL(data[float64](logits), targets, v, rowLoss)
	}
	if err != nil {
		return nil, err
	}
	mean := 0.0
	if count > 0 {
		mean = sum / float64(count)
	}
	if logits.Dtype() == tensor.Float32 {
		return G.NewF32(float32(mean)), nil
	}
	return G.NewF64(mean), nil
}

// DiffWRT is true for the logits only.
func (op *xentOp) DiffWRT(int) []bool { return []bool{true, false} }

// SymDiff is dlogits = g * (softmax(logits) - onehot(target)) / count on counted rows.
func (op *xentOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	d, err := G.ApplyOp(&xentGradOp{baseOp{name: "CrossEntropyGrad"}}, in[0], in[1], grad)
	return G.Nodes{d, nil}, err
}

// xentGradOp maps (logits, targets, g) to the gradient of the logits.
type xentGradOp struct{ baseOp }

// Arity is 3: logits, targets and the scalar output gradient.
func (op *xentGradOp) Arity() int { return 3 }

// Type maps (matrix, Int vector, scalar) to a matrix.
func (op *xentGradOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	m := G.TensorType{Dims: 2, Of: a}
	return hm.NewFnType(m, G.TensorType{Dims: 1, Of: tensor.Int}, a, m)
}

// InferShape is the logits' shape.
func (op *xentGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}

// Do computes the gradient into a new tensor.
func (op *xentGradOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

// UsePreallocDo computes the gradient into prealloc when it fits.
func (op *xentGradOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	logits, targets, err := xentInputs(op.name, in)
	if err != nil {
		return nil, err
	}
	g, err := scalar(in[2])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op.name, err)
	}
	d := op.out.get(prealloc, logits.Dtype(), logits.Shape(), in)
	v := logits.Shape()[1]
	switch logits.Dtype() {
	case tensor.Float32:
		kernel.NLLGrad(data[float32](d), data[float32](logits), targets, v, g)
	case tensor.Float64:
		kernel.NLLGrad(data[float64](d), data[float64](logits), targets, v, g)
	}
	return d, nil
}

// xentInputs returns the logits tensor and the targets slice of a cross-entropy op.
func xentInputs(op string, in []G.Value) (*tensor.Dense, []int, error) {
	logits, err := dense(op, in, 0)
	if err != nil {
		return nil, nil, err
	}
	t, err := dense(op, in, 1)
	if err != nil {
		return nil, nil, err
	}
	targets, ok := t.Data().([]int)
	if !ok {
		return nil, nil, fmt.Errorf("%s: targets are %v, want int", op, t.Dtype())
	}
	return logits, targets, nil
}
