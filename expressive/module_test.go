package expressive

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// The module computes (X W_Q)(X W_K)^T, checked entry by entry on a small example, and its
// attention stays finite and exact for rows whose logits sit thousands of nats away from
// each other and from the matrix's first entry (where an unshifted softmax overflows).
func TestModuleLogitsAndStableSoftmax(t *testing.T) {
	wq := mat.NewDense(2, 1, []float64{1, 0}) // (n, d) = (2, 1)
	wk := mat.NewDense(2, 1, []float64{0, 1})
	mod, err := NewModule(wq, wk)
	if err != nil {
		t.Fatal(err)
	}
	// Rows x_i = (a_i, b_i): logits z_ij = a_i * b_j.
	x := mat.NewDense(3, 2, []float64{
		1, 2,
		3000, 1,
		-2000, 1.5,
	})
	z, err := mod.Logits(x)
	if err != nil {
		t.Fatal(err)
	}
	a, b := []float64{1, 3000, -2000}, []float64{2, 1, 1.5}
	for i := range 3 {
		for j := range 3 {
			if z.At(i, j) != a[i]*b[j] {
				t.Fatalf("z[%d][%d] = %v, want %v", i, j, z.At(i, j), a[i]*b[j])
			}
		}
	}
	att, err := mod.Attention(x)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		// Exact softmax from the shifted logits, by hand: weights e^{z_ij - max_j z_ij}.
		top := math.Max(z.At(i, 0), math.Max(z.At(i, 1), z.At(i, 2)))
		var sum float64
		for j := range 3 {
			sum += math.Exp(z.At(i, j) - top)
		}
		for j := range 3 {
			want := math.Exp(z.At(i, j)-top) / sum
			got := att.At(i, j)
			if math.IsNaN(got) || math.Abs(got-want) > 1e-15 {
				t.Fatalf("attention[%d][%d] = %v, want %v", i, j, got, want)
			}
		}
	}
	if att.At(1, 0) != 1 || att.At(2, 1) != 1 {
		t.Fatalf("far rows should put all weight on their largest logit: %v", mat.Formatted(att))
	}
	if _, err := NewModule(wq, mat.NewDense(3, 1, nil)); err == nil {
		t.Error("mismatched W_Q, W_K gave no error")
	}
	if _, err := mod.Logits(nil); err == nil {
		t.Error("nil input gave no error")
	}
}
