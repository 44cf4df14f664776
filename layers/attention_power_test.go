package layers

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/tensor"

	"lipformer/lipschitz"
	"lipformer/ops"
)

// TestPowerIterateMatchesCopiedWeights: PowerIterate, which reads the layer's weights as
// they are and iterates on N through its products with vectors, leaves the vectors where
// power iteration on float64 copies of the weights and on the N they form does (headCopies,
// lipschitz.StackedN, powerIterateRef): to 1e-13 in float64, to a float32 rounding of each
// other in float32, at the first call and after the weights change.
func TestPowerIterateMatchesCopiedWeights(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		// width 16 in two heads: head maps of 8 columns, the float32 kernels' blocks of four
		a, err := NewAttention("attn", ops.L2, 16, 2, true, 0.7, 0.7, dt, rng(21))
		if err != nil {
			t.Fatal(err)
		}
		a.AddPower("attn")
		for round := range 3 {
			if round > 0 {
				for _, p := range []*Param{a.WQ, a.WV, a.WO} {
					p.fillNormal(rng(uint64(30+round)), 0.5+float64(round))
				}
			}
			wq, wv, wo := headCopies(t, a)
			uq, vq, un, vn := a.Power.UQ.Float64s(), a.Power.VQ.Float64s(), a.Power.UN.Float64s(), a.Power.VN.Float64s()
			for h := range a.Heads {
				powerIterateRef(wq[h], uq[h*16:(h+1)*16], vq[h*8:(h+1)*8], 2)
			}
			powerIterateRef(lipschitz.StackedN(wq, wv, wo), un, vn, 2)
			a.PowerIterate(2)
			for _, c := range []struct {
				name      string
				got, want []float64
			}{{"uq", a.Power.UQ.Float64s(), uq}, {"vq", a.Power.VQ.Float64s(), vq}, {"un", a.Power.UN.Float64s(), un}, {"vn", a.Power.VN.Float64s(), vn}} {
				for i := range c.want {
					// Both sides went through the buffer's precision.
					want, tol := c.want[i], 1e-13
					if dt == tensor.Float32 {
						want, tol = float64(float32(want)), 0x1p-23 // a float32 rounding apart, at most
					}
					if math.Abs(c.got[i]-want) > tol*math.Max(1, math.Abs(want)) {
						t.Fatalf("%v, round %d: %s[%d] = %.17g, want %.17g", dt, round, c.name, i, c.got[i], want)
					}
				}
			}
		}
	}
}

// powerIterateRef runs n steps of power iteration on w from the unit vectors u and v with
// gonum's products: u = W v / ||W v||, v = W^T u / ||W^T u||.
func powerIterateRef(w *mat.Dense, u, v []float64, n int) {
	uv, vv := mat.NewVecDense(len(u), u), mat.NewVecDense(len(v), v)
	for range n {
		uv.MulVec(w, vv)
		uv.ScaleVec(1/mat.Norm(uv, 2), uv)
		vv.MulVec(w.T(), uv)
		vv.ScaleVec(1/mat.Norm(vv, 2), vv)
	}
}

// TestStackedNMulVec: N x and N^T x without N equal the products with StackedN's N, for
// four heads of width 4 in float32 and float64 (the kernels' assembly and portable paths),
// over whatever y held before.
func TestStackedNMulVec(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		a, err := NewAttention("attn", ops.L2, 16, 4, true, 0.7, 0.7, dt, rng(5))
		if err != nil {
			t.Fatal(err)
		}
		wq, wv, wo := headCopies(t, a)
		n := lipschitz.StackedN(wq, wv, wo)
		r := rng(6)
		x := make([]float64, 16)
		for i := range x {
			x[i] = r.NormFloat64()
		}
		tmp := make([]float64, 16+4)
		for _, trans := range []bool{false, true} {
			var want mat.VecDense
			if trans {
				want.MulVec(n.T(), mat.NewVecDense(16, x))
			} else {
				want.MulVec(n, mat.NewVecDense(16, x))
			}
			y := make([]float64, 16)
			for i := range y {
				y[i] = 100 * r.NormFloat64()
			}
			switch v := a.WQ.Value.Data().(type) {
			case []float32:
				stackedNMulVec(y, v, a.WV.Value.Data().([]float32), a.WO.Value.Data().([]float32), a.Heads, x, trans, tmp)
			case []float64:
				stackedNMulVec(y, v, a.WV.Value.Data().([]float64), a.WO.Value.Data().([]float64), a.Heads, x, trans, tmp)
			}
			for i := range y {
				if w := want.AtVec(i); math.Abs(y[i]-w) > 1e-13*math.Max(1, math.Abs(w)) {
					t.Errorf("%v, trans %v: y[%d] = %.17g, want %.17g", dt, trans, i, y[i], w)
				}
			}
		}
	}
}

// TestPowerIterateKeepsVectorsOnNonFiniteWeights: an infinite or NaN entry in any of W^Q,
// W^V or W^O leaves every vector as it was, and the vectors move again once the weights
// are finite.
func TestPowerIterateKeepsVectorsOnNonFiniteWeights(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		for _, bad := range []float64{math.Inf(-1), math.NaN()} {
			a, err := NewAttention("attn", ops.L2, 16, 2, true, 0.7, 0.7, dt, rng(8))
			if err != nil {
				t.Fatal(err)
			}
			a.AddPower("attn")
			for pi, p := range []*Param{a.WQ, a.WV, a.WO} {
				before := [][]float64{a.Power.UQ.Float64s(), a.Power.VQ.Float64s(), a.Power.UN.Float64s(), a.Power.VN.Float64s()}
				good := setEntry(p, 37, bad)
				a.PowerIterate(3)
				for i, got := range [][]float64{a.Power.UQ.Float64s(), a.Power.VQ.Float64s(), a.Power.UN.Float64s(), a.Power.VN.Float64s()} {
					for j := range got {
						if got[j] != before[i][j] {
							t.Fatalf("%v, %v in weight %d: vector %d moved at %d: %v, was %v", dt, bad, pi, i, j, got[j], before[i][j])
						}
					}
				}
				setEntry(p, 37, good+0.5)
				a.PowerIterate(3)
				if a.Power.VN.Float64s()[0] == before[3][0] {
					t.Fatalf("%v, weight %d finite again: the vectors did not move", dt, pi)
				}
			}
		}
	}
}

// setEntry writes x into element i of p and returns the value it held.
func setEntry(p *Param, i int, x float64) float64 {
	switch d := p.Value.Data().(type) {
	case []float32:
		old := d[i]
		d[i] = float32(x)
		return float64(old)
	case []float64:
		old := d[i]
		d[i] = x
		return old
	}
	panic("setEntry: not a float tensor")
}
