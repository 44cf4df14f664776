package ops

import (
	"fmt"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Correct adds to the graph the number of rows of logits (N, V) whose largest logit is at
// the row's target (N), as a scalar of the logits' type: the top-1 hits of next-byte
// prediction. A row with a negative target is not counted; of equal largest logits the
// first counts. It has no gradient.
func Correct(logits, targets *G.Node) (*G.Node, error) {
	if err := checkLogitsTargets("correct", logits, targets); err != nil {
		return nil, err
	}
	return G.ApplyOp(&correctOp{baseOp{name: "Correct"}}, logits, targets)
}

// correctOp is the op of Correct.
type correctOp struct{ baseOp }

// Arity is 2: logits and targets.
func (op *correctOp) Arity() int { return 2 }

// Type maps a float matrix and an Int vector to a float scalar.
func (op *correctOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(G.TensorType{Dims: 2, Of: a}, G.TensorType{Dims: 1, Of: tensor.Int}, a)
}

// InferShape is a scalar.
func (op *correctOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.ScalarShape(), nil
}

// Do counts the hits.
func (op *correctOp) Do(in ...G.Value) (G.Value, error) {
	logits, targets, err := xentInputs(op.name, in)
	if err != nil {
		return nil, err
	}
	v := logits.Shape()[1]
	var hits int
	switch logits.Dtype() {
	case tensor.Float32:
		hits, err = countHits(data[float32](logits), targets, v)
	case tensor.Float64:
		hits, err = countHits(data[float64](logits), targets, v)
	}
	if err != nil {
		return nil, err
	}
	if logits.Dtype() == tensor.Float32 {
		return G.NewF32(float32(hits)), nil
	}
	return G.NewF64(float64(hits)), nil
}

// DiffWRT is false for both inputs: a count has no gradient.
func (op *correctOp) DiffWRT(int) []bool { return []bool{false, false} }

// SymDiff refuses: a count has no gradient.
func (op *correctOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, fmt.Errorf("%s has no gradient", op.name)
}

// countHits counts the rows of logits (len(targets), v) whose first largest entry is at
// the row's non-negative target.
func countHits[T float32 | float64](logits []T, targets []int, v int) (int, error) {
	hits := 0
	for r, t := range targets {
		if t < 0 {
			continue
		}
		if t >= v {
			return 0, fmt.Errorf("correct: target %d of row %d, want < %d", t, r, v)
		}
		row := logits[r*v : (r+1)*v]
		best := 0
		for j, z := range row {
			if z > row[best] {
				best = j
			}
		}
		if best == t {
			hits++
		}
	}
	return hits, nil
}
