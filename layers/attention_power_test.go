package layers

import (
	"math"
	"testing"

	"gorgonia.org/tensor"

	"lipformer/lipschitz"
	"lipformer/ops"
)

// TestPowerIterateMatchesCopiedWeights: PowerIterate, which refills the float64 weights it
// keeps from call to call and iterates on N through its products with vectors, leaves the
// vectors where power iteration on fresh copies of the weights and on the N they form
// does (headCopies, lipschitz.StackedN): the query maps' bit for bit, N's to 1e-13, or to
// a float32 rounding of each other in float32, at the first call and after the weights
// change.
func TestPowerIterateMatchesCopiedWeights(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		a, err := NewAttention("attn", ops.L2, 8, 2, true, 0.7, 0.7, dt, rng(21))
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
				powerIterateDense(wq[h], uq[h*8:(h+1)*8], vq[h*4:(h+1)*4], 2)
			}
			powerIterateDense(lipschitz.StackedN(wq, wv, wo), un, vn, 2)
			a.PowerIterate(2)
			for _, c := range []struct {
				name      string
				got, want []float64
			}{{"uq", a.Power.UQ.Float64s(), uq}, {"vq", a.Power.VQ.Float64s(), vq}, {"un", a.Power.UN.Float64s(), un}, {"vn", a.Power.VN.Float64s(), vn}} {
				for i := range c.want {
					// Both sides went through the buffer's precision.
					want, tol := c.want[i], 0.0
					if c.name == "un" || c.name == "vn" {
						tol = 1e-13 // N v in another order than with N formed
					}
					if dt == tensor.Float32 {
						want = float64(float32(want))
						if tol > 0 {
							tol = 0x1p-23 // a float32 rounding apart, at most
						}
					}
					if math.Abs(c.got[i]-want) > tol*math.Max(1, math.Abs(want)) {
						t.Fatalf("%v, round %d: %s[%d] = %.17g, want %.17g", dt, round, c.name, i, c.got[i], want)
					}
				}
			}
		}
	}
}
