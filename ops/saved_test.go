package ops

import (
	"fmt"
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
)

// overwrite copies src's values into dst's backing array: dst changes in place, at the
// same address.
func overwrite(t *testing.T, dst, src *tensor.Dense) {
	t.Helper()
	switch d := dst.Data().(type) {
	case []float64:
		copy(d, src.Data().([]float64))
	case []float32:
		copy(d, src.Data().([]float32))
	default:
		t.Fatalf("overwrite: %T", d)
	}
}

// do runs op on the inputs, failing the test on an error.
func do(t *testing.T, op G.Op, in ...G.Value) G.Value {
	t.Helper()
	v, err := op.Do(in...)
	if err != nil {
		t.Fatalf("%v: %v", op, err)
	}
	return v
}

// centralDiff is the central difference (f(x + h v) - f(x - h v)) / 2h of f at x along v;
// x is restored.
func centralDiff(x, v *tensor.Dense, h float64, f func() float64) float64 {
	xs, vs := x.Data().([]float64), v.Data().([]float64)
	orig := append([]float64(nil), xs...)
	for i := range xs {
		xs[i] = orig[i] + h*vs[i]
	}
	fp := f()
	for i := range xs {
		xs[i] = orig[i] - h*vs[i]
	}
	fm := f()
	copy(xs, orig)
	return (fp - fm) / (2 * h)
}

// dot is the inner product of two float64 slices.
func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// assertDirectional fails unless the gradient grad of f at x, along v, agrees with f's
// central difference to a relative 1e-7.
func assertDirectional(t *testing.T, what string, x, v *tensor.Dense, grad []float64, f func() float64) {
	t.Helper()
	num := centralDiff(x, v, 1e-5, f)
	an := dot(grad, v.Data().([]float64))
	if d := math.Abs(an - num); !(d <= 1e-7*math.Max(math.Abs(num), 1)) {
		t.Errorf("%s: gradient along v %.12g, central difference %.12g", what, an, num)
	}
}

// TestAttentionBackwardOfALaterRun: after a forward and its backward (one run), the input
// is overwritten in place (the same tensor and backing array, as an optimizer updates a
// weight) and the backward runs again without its forward. It must not reuse the P its
// forward computed from the old values: it gives exactly the gradient that a backward
// without kept P computes at the new values, which matches central differences.
func TestAttentionBackwardOfALaterRun(t *testing.T) {
	for _, kind := range kinds {
		for _, causal := range []bool{false, true} {
			for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
				n := attnBlock + 6
				c := newAttnCase(90, 2, n, 8, 2)
				spec := AttentionSpec{Kind: kind, Heads: c.h, SeqLen: n, Causal: causal}
				what := fmt.Sprintf("%v causal=%t %v", kind, causal, dt)
				x, dout := asDtype(c.packed(kind), dt), asDtype(gradcheck.Rand(91, 1, 2*n, c.d), dt)
				fwd := newAttentionOp(spec, false)
				bwd := fwd.backward()
				y := do(t, fwd, x)
				do(t, bwd, x, y, dout)

				next := c
				next.x = gradcheck.Rand(92, 1, 2*n, c.d)
				x64 := next.packed(kind)
				overwrite(t, x, asDtype(x64, dt))
				got := toF64(do(t, bwd, x, y, dout))
				_, want := attnGrad(t, newAttentionOp(spec, false), newAttentionOp(spec, true), asDtype(x64, dt), dout)
				assertClose(t, what, got, [][]float64{want}, 0)
				if dt == tensor.Float64 {
					dy := dout.Data().([]float64)
					assertDirectional(t, what, x64, gradcheck.Rand(93, 1, x64.Shape()...), got, func() float64 {
						return dot(toF64(do(t, newAttentionOp(spec, false), x64)), dy)
					})
				}
			}
		}
	}
}

// TestAttentionBiasBackwardOfALaterRun is TestAttentionBackwardOfALaterRun for the
// position bias: after one run the bias is overwritten in place. The bias gradient run
// again without the backward refuses the sums of the earlier run, and the backward run
// again without the forward gives, with the bias gradient after it, the gradients at the
// new bias.
func TestAttentionBiasBackwardOfALaterRun(t *testing.T) {
	for _, kind := range kinds {
		n := attnBlock + 6
		c := newAttnCase(95, 2, n, 8, 2)
		spec := AttentionSpec{Kind: kind, Heads: c.h, SeqLen: n, Causal: true, Bias: true, BiasLen: n + 3}
		x, dout := c.packed(kind), gradcheck.Rand(96, 1, 2*n, c.d)
		bias, newBias := gradcheck.Rand(97, 1, c.h, n+3), gradcheck.Rand(98, 1, c.h, n+3)
		run := func(fwd *attentionOp, bias *tensor.Dense) (bwd, bg *attentionOp, y, dp, db G.Value) {
			bwd = fwd.backward()
			bg = fwd.biasGradOp()
			y = do(t, fwd, x, bias)
			dp = do(t, bwd, x, bias, y, dout)
			return bwd, bg, y, dp, do(t, bg, x, bias, y, dout, dp)
		}
		fwd := newAttentionOp(spec, false)
		bwd, bg, y, dp, _ := run(fwd, bias)
		_, _, _, wantDP, wantDB := run(newAttentionOp(spec, false), newBias)

		overwrite(t, bias, newBias)
		if v, err := bg.Do(x, bias, y, dout, dp); err == nil {
			t.Errorf("%v: the bias gradient ran again on the sums of the earlier backward: %v", kind, toF64(v)[:3])
		}
		dp = do(t, bwd, x, bias, y, dout)
		assertClose(t, fmt.Sprintf("%v packed", kind), toF64(dp), [][]float64{toF64(wantDP)}, 0)
		assertClose(t, fmt.Sprintf("%v bias", kind), toF64(do(t, bg, x, bias, y, dout, dp)), [][]float64{toF64(wantDB)}, 0)
	}
}

// TestL2BoundTok2GradientOfALaterRun: the bound's four gradient ops reuse its factors in
// the run it computed them. After that run, W^Q and the bias are overwritten in place and the gradient ops run again without the
// bound. They must not reuse the factors the bound computed from the old values: each
// gives exactly the gradient a gradient op without a forward computes at the new values,
// and the W^Q gradient matches central differences.
func TestL2BoundTok2GradientOfALaterRun(t *testing.T) {
	const h, n = 2, 5
	w := []*tensor.Dense{gradcheck.Rand(100, 1, 6, 6), gradcheck.Rand(101, 1, 6, 6), gradcheck.Rand(102, 1, 6, 6),
		gradcheck.Rand(103, 1, h, 6), gradcheck.Rand(104, 1, h, 6/h), gradcheck.Rand(105, 1, 6), gradcheck.Rand(106, 1, 6),
		gradcheck.Rand(107, 1, h, 7)}
	in := make([]G.Value, len(w))
	for i, x := range w {
		in[i] = x
	}
	g := G.NewF64(0.7)
	fwd := newTok2Op(h, n, true, -1)
	var grads [4]*tok2Op
	for part := range grads {
		grads[part] = fwd.gradOp(part) // as SymDiff does, before any run
	}
	out := do(t, fwd, in...)
	for part, op := range grads { // the factors are reused, with exactly the recomputed result
		got := toF64(do(t, op, tok2GradArgs(in, out, g)...))
		if op.read.seen != fwd.st.done.gen {
			t.Fatalf("part %d did not reuse the factors of the bound's run", part)
		}
		want := toF64(do(t, newTok2Op(h, n, true, part), tok2GradArgs(in, out, g)...))
		assertClose(t, fmt.Sprintf("part %d kept", part), got, [][]float64{want}, 0)
	}

	newQ, newBias := gradcheck.Rand(108, 1, 6, 6), gradcheck.Rand(109, 1, h, 7)
	overwrite(t, w[0], newQ)
	overwrite(t, w[7], newBias)
	for part, op := range grads {
		got := toF64(do(t, op, tok2GradArgs(in, out, g)...))
		want := toF64(do(t, newTok2Op(h, n, true, part), tok2GradArgs(in, out, g)...))
		assertClose(t, fmt.Sprintf("part %d", part), got, [][]float64{want}, 0)
		if part == 0 {
			assertDirectional(t, "W^Q", w[0], gradcheck.Rand(110, 1, 6, 6), got, func() float64 {
				return 0.7 * toF64(do(t, newTok2Op(h, n, true, -1), in...))[0]
			})
		}
	}
}

// tok2GradArgs are the inputs of a gradient op: the bound's inputs, the bound and g.
func tok2GradArgs(in []G.Value, out, g G.Value) []G.Value {
	return append(append([]G.Value{}, in...), out, g)
}

// TestL2BoundGradientOfALaterRun: the gradient ops of Kim et al.'s and the product bound
// reuse the factors of their bound's run, with exactly the gradient that recomputed factors
// give; after the weights are overwritten in place and the gradient ops run again without
// their bound, they recompute, and match a fresh op and central differences.
func TestL2BoundGradientOfALaterRun(t *testing.T) {
	const h = 2
	for _, form := range []BoundForm{BoundKim, BoundProduct} {
		w := []*tensor.Dense{gradcheck.Rand(120, 1, 6, 6), gradcheck.Rand(121, 1, 6, 6), gradcheck.Rand(122, 1, 6, 6)}
		in := []G.Value{w[0], w[1], w[2]}
		g := G.NewF64(0.7)
		fwd := newL2BoundOp(h, 1.3, form, -1)
		var grads [3]*l2BoundOp
		for part := range grads {
			grads[part] = fwd.gradOp(part) // as SymDiff does, before any run
		}
		out := do(t, fwd, in...)
		args := func() []G.Value { return append(append([]G.Value{}, in...), out, g) }
		for part, op := range grads {
			got := toF64(do(t, op, args()...))
			if op.read.seen != fwd.st.done.gen {
				t.Fatalf("%v part %d did not reuse the factors of the bound's run", form, part)
			}
			want := toF64(do(t, newL2BoundOp(h, 1.3, form, part), args()...))
			assertClose(t, fmt.Sprintf("%v part %d kept", form, part), got, [][]float64{want}, 0)
		}
		overwrite(t, w[1], gradcheck.Rand(123, 1, 6, 6))
		for part, op := range grads {
			got := toF64(do(t, op, args()...))
			want := toF64(do(t, newL2BoundOp(h, 1.3, form, part), args()...))
			assertClose(t, fmt.Sprintf("%v part %d", form, part), got, [][]float64{want}, 0)
			assertDirectional(t, fmt.Sprintf("%v part %d", form, part), w[part], gradcheck.Rand(uint64(124+part), 1, 6, 6), got, func() float64 {
				return 0.7 * toF64(do(t, newL2BoundOp(h, 1.3, form, -1), in...))[0]
			})
		}
	}
}
