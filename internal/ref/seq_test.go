package ref

import "testing"

func TestFlattenIsRowMajor(t *testing.T) {
	x := [][]float64{{1, 2, 3}, {4, 5, 6}}
	v, err := Flatten(x)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		for k := range 3 {
			if v[i*3+k] != x[i][k] {
				t.Fatalf("v[%d] = %v, want x[%d][%d] = %v", i*3+k, v[i*3+k], i, k, x[i][k])
			}
		}
	}
	back, err := Unflatten(v, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, "Unflatten(Flatten(x))", back, x, 0)
}

func TestFlattenErrors(t *testing.T) {
	if _, err := Flatten(nil); err == nil {
		t.Error("Flatten(nil): want error")
	}
	if _, err := Flatten([][]float64{{1, 2}, {3}}); err == nil {
		t.Error("Flatten(ragged): want error")
	}
	if _, err := Unflatten([]float64{1, 2, 3}, 2, 2); err == nil {
		t.Error("Unflatten(3 values, 2x2): want error")
	}
	if _, err := Unflatten(nil, 0, 2); err == nil {
		t.Error("Unflatten(0x2): want error")
	}
}
