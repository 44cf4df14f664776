package lipschitz

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"lipformer/internal/ref"
)

func TestNormInfHandComputed(t *testing.T) {
	w := mat.NewDense(2, 2, []float64{1, -2, 3, 4})
	if got := NormInf(w); got != 7 {
		t.Errorf("NormInf = %v, want 7 (row sums 3, 7)", got)
	}
	if got := NormInf(w.T()); got != 6 {
		t.Errorf("NormInf(W^T) = %v, want 6 (column sums 4, 6)", got)
	}
	if got := LinearLipInf(w); got != 6 {
		t.Errorf("LinearLipInf = %v, want 6", got)
	}
}

func TestNorm2HandComputed(t *testing.T) {
	if got := Norm2(mat.NewDiagDense(3, []float64{3, -5, 2})); math.Abs(got-5) > 1e-14 {
		t.Errorf("Norm2(diag(3, -5, 2)) = %v, want 5", got)
	}
	// Rank one u v^T with |u| = 5 (3, 4) and |v| = 3 (1, 2, 2): norm 15.
	uv := mat.NewDense(2, 3, nil)
	uv.Outer(1, mat.NewVecDense(2, []float64{3, 4}), mat.NewVecDense(3, []float64{1, 2, 2}))
	if got := Norm2(uv); math.Abs(got-15) > 1e-13 {
		t.Errorf("Norm2(u v^T) = %v, want 15", got)
	}
	if got := Norm2(&mat.Dense{}); got != 0 {
		t.Errorf("Norm2(empty) = %v, want 0", got)
	}
}

func TestNormsOfNil(t *testing.T) {
	var w *mat.Dense
	for name, got := range map[string]float64{"NormInf": NormInf(w), "Norm2": Norm2(w), "LinearLipInf": LinearLipInf(nil)} {
		if !math.IsNaN(got) {
			t.Errorf("%s(nil) = %v, want NaN", name, got)
		}
	}
}

// The exact constants of x -> x W on a sequence are the norms of its
// measured (ND, ND) Jacobian I_N (x) W^T.
func TestLinearConstantsMatchJacobian(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	const n, din, dout = 3, 5, 4
	w := randDense(rng, din, dout, 1)
	f := seqMap(t, n, din, func(x [][]float64) ([][]float64, error) { return ref.Linear(x, w, nil) })
	j := mustJacobian(t, f, randVec(rng, n*din, 1), 1e-3)
	if got, want := JacobianNormInf(j), LinearLipInf(w); math.Abs(got-want) > 1e-10*want {
		t.Errorf("measured ||J||_inf = %.15g, LinearLipInf = %.15g", got, want)
	}
	if got, want := JacobianNorm2(j), Norm2(w); math.Abs(got-want) > 1e-10*want {
		t.Errorf("measured ||J||_2 = %.15g, Norm2 = %.15g", got, want)
	}
}
