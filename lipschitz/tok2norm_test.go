package lipschitz

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The token norm is the inf-norm for width 1 and the spectral norm for one token; in
// between it lies within its bounds max_i ||J_i||_2 <= . <= max_i sum_k ||J_ik||_2.
func TestJacobianNormTok2(t *testing.T) {
	j := randDense(rand.New(rand.NewPCG(1, 2)), 6, 6, 1)
	got, err := JacobianNormTok2(j, 6, 20)
	if err != nil {
		t.Fatal(err)
	}
	if want := NormInf(j); math.Abs(got-want) > 1e-12*want {
		t.Errorf("width 1: %v, want the inf-norm %v", got, want)
	}
	if got, _ = JacobianNormTok2(j, 1, 20); math.Abs(got-Norm2(j)) > 1e-12*Norm2(j) {
		t.Errorf("one token: %v, want the spectral norm %v", got, Norm2(j))
	}
	const n, dim = 4, 3
	j = randDense(rand.New(rand.NewPCG(2, 2)), n*dim, n*dim, 1)
	got, _ = JacobianNormTok2(j, n, 50)
	lo, hi := 0.0, 0.0
	for i := range n {
		rows := j.Slice(i*dim, (i+1)*dim, 0, n*dim)
		lo = math.Max(lo, Norm2(rows))
		s := 0.0
		for k := range n {
			s += Norm2(j.Slice(i*dim, (i+1)*dim, k*dim, (k+1)*dim))
		}
		hi = math.Max(hi, s)
	}
	if got < lo*(1-1e-12) || got > hi*(1+1e-12) {
		t.Errorf("token norm %v outside [%v, %v]", got, lo, hi)
	}
	if _, err := JacobianNormTok2(j, n+1, 5); err == nil {
		t.Error("a wrong shape was accepted")
	}
}
