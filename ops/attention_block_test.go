package ops

import (
	"fmt"
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
	"lipformer/kernel"
)

// blockLens are sequence lengths around the causal block size: shorter than one block,
// exactly one, a multiple, and not a multiple of it.
var blockLens = []int{5, attnBlock, 2 * attnBlock, attnBlock + 6, 2*attnBlock + 22}

// asDtype copies a float64 tensor into a new tensor of dtype dt.
func asDtype(x *tensor.Dense, dt tensor.Dtype) *tensor.Dense {
	v := x.Data().([]float64)
	if dt == tensor.Float64 {
		return tensor.New(tensor.WithShape(x.Shape().Clone()...), tensor.WithBacking(append([]float64(nil), v...)))
	}
	w := make([]float32, len(v))
	for i, f := range v {
		w[i] = float32(f)
	}
	return tensor.New(tensor.WithShape(x.Shape().Clone()...), tensor.WithBacking(w))
}

// maxAbs is the largest absolute value of v.
func maxAbs(v []float64) float64 {
	var m float64
	for _, f := range v {
		m = math.Max(m, math.Abs(f))
	}
	return m
}

// assertNear fails unless got and want agree within tol times the largest |want|.
func assertNear(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d values, want %d", what, len(got), len(want))
	}
	bound := tol * maxAbs(want)
	for i, w := range want {
		if d := math.Abs(got[i] - w); !(d <= bound) {
			t.Fatalf("%s [%d]: got %.10g want %.10g (|diff| %.3g > %.3g)", what, i, got[i], w, d, bound)
		}
	}
}

// attnGrad runs the forward op and then its backward on dout, as a training step does,
// and returns the output and the gradient of packed.
func attnGrad(t *testing.T, fwd, bwd *attentionOp, packed, dout *tensor.Dense) (out, dp []float64) {
	t.Helper()
	y, err := fwd.Do(packed)
	if err != nil {
		t.Fatal(err)
	}
	d, err := bwd.Do(packed, y, dout)
	if err != nil {
		t.Fatal(err)
	}
	return toF64(y), toF64(d)
}

// TestAttentionBlocksMatchReference checks the forward of every kind against the plain-Go
// layer at lengths around the causal block size, in both precisions.
func TestAttentionBlocksMatchReference(t *testing.T) {
	tols := map[tensor.Dtype]float64{tensor.Float64: 1e-12, tensor.Float32: 2e-5}
	for _, kind := range kinds {
		for _, causal := range []bool{false, true} {
			for _, n := range blockLens {
				c := newAttnCase(50, 2, n, 6, 2)
				want := c.reference(t, kind, causal)
				spec := AttentionSpec{Kind: kind, Heads: c.h, SeqLen: n, Causal: causal}
				for dt, tol := range tols {
					got := run1(t, asDtype(c.packed(kind), dt), func(x *G.Node) (*G.Node, error) { return Attention(x, spec) })
					assertClose(t, fmt.Sprintf("%v causal=%t T=%d %v", kind, causal, n, dt), got, want, tol)
				}
			}
		}
	}
}

// TestAttentionBlocksGradient checks the backward against central differences at a length
// of two causal blocks, the second one partial.
func TestAttentionBlocksGradient(t *testing.T) {
	for _, kind := range kinds {
		for _, causal := range []bool{false, true} {
			c := newAttnCase(60, 1, attnBlock+6, 4, 2)
			spec := AttentionSpec{Kind: kind, Heads: c.h, SeqLen: c.t, Causal: causal}
			res, err := gradcheck.Check(func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
				return Attention(in[0], spec)
			}, []gradcheck.Input{{Name: "packed", Value: c.packed(kind)}}, 7, 1e-5)
			assertGrad(t, fmt.Sprintf("%v causal=%t", kind, causal), res, err)
		}
	}
}

// TestAttentionFloat32Gradient checks the float32 backward against the float64 one (which
// TestAttentionBlocksGradient checks against finite differences) at lengths around the
// causal block size.
func TestAttentionFloat32Gradient(t *testing.T) {
	for _, kind := range kinds {
		for _, causal := range []bool{false, true} {
			for _, n := range blockLens {
				c := newAttnCase(70, 2, n, 8, 2)
				spec := AttentionSpec{Kind: kind, Heads: c.h, SeqLen: n, Causal: causal}
				packed, dout := c.packed(kind), gradcheck.Rand(71, 1, 2*n, c.d)
				got := map[tensor.Dtype][]float64{}
				for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
					fwd := newAttentionOp(spec, false)
					_, got[dt] = attnGrad(t, fwd, fwd.backward(), asDtype(packed, dt), asDtype(dout, dt))
				}
				assertNear(t, fmt.Sprintf("%v causal=%t T=%d", kind, causal, n), got[tensor.Float32], got[tensor.Float64], 2e-5)
			}
		}
	}
}

// TestAttentionKeptProbs checks that the backward reusing the forward's P gives exactly
// the gradient of the backward that recomputes it, and that a backward run again without
// its forward recomputes P (TestAttentionBackwardOfALaterRun changes the input between).
func TestAttentionKeptProbs(t *testing.T) {
	for _, kind := range kinds {
		for _, causal := range []bool{false, true} {
			for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
				n := 2*attnBlock + 22
				c := newAttnCase(80, 2, n, 8, 2)
				spec := AttentionSpec{Kind: kind, Heads: c.h, SeqLen: n, Causal: causal}
				packed, dout := asDtype(c.packed(kind), dt), asDtype(gradcheck.Rand(81, 1, 2*n, c.d), dt)
				what := fmt.Sprintf("%v causal=%t %v", kind, causal, dt)

				_, recomputed := attnGrad(t, newAttentionOp(spec, false), newAttentionOp(spec, true), packed, dout)
				fwd := newAttentionOp(spec, false)
				bwd := fwd.backward()
				_, kept := attnGrad(t, fwd, bwd, packed, dout)
				assertClose(t, what+" kept", kept, [][]float64{recomputed}, 0)

				spoilProbs(fwd.st, dt)                 // the kept P, if reused, would give NaN gradients
				d, err := bwd.Do(packed, packed, dout) // no forward since: P is recomputed (out only orders the ops)
				if err != nil {
					t.Fatal(err)
				}
				assertClose(t, what+" again", toF64(d), [][]float64{recomputed}, 0)
			}
		}
	}
}

// spoilProbs overwrites the P kept in st with 2s (no probabilities).
func spoilProbs(st *attnState, dt tensor.Dtype) {
	if dt == tensor.Float32 {
		spoil(kernel.Scratch[float32](&st.probs, 1, 1)[0])
	} else {
		spoil(kernel.Scratch[float64](&st.probs, 1, 1)[0])
	}
}

// spoil sets every element of p to 2.
func spoil[T kernel.Float](p []T) {
	for i := range p {
		p[i] = 2
	}
}
