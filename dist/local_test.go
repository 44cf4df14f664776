package dist

import (
	"slices"
	"testing"
)

// TestLocalIsAJobOfOne: the single-process communicator is rank 0 of 1, its sums and
// broadcast leave the buffers as they are, and it refuses a root other than 0.
func TestLocalIsAJobOfOne(t *testing.T) {
	c := Local()
	if c.Rank() != 0 || c.Size() != 1 {
		t.Fatalf("Local is rank %d of %d, want 0 of 1", c.Rank(), c.Size())
	}
	f64, f32, b := []float64{1.5, -2, 3}, []float32{0.25, 4}, []byte("abc")
	if err := Sum(c, f64); err != nil {
		t.Fatal(err)
	}
	if err := Sum(c, f32); err != nil {
		t.Fatal(err)
	}
	if err := c.Bcast(b, 0); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f64, []float64{1.5, -2, 3}) || !slices.Equal(f32, []float32{0.25, 4}) || string(b) != "abc" {
		t.Errorf("after the sums and broadcast of one rank: %v %v %q, want the buffers unchanged", f64, f32, b)
	}
	if err := c.Bcast(b, 1); err == nil {
		t.Error("Bcast from root 1 of a job of 1 = nil, want an error")
	}
	if err := c.Barrier(); err != nil {
		t.Error(err)
	}
	c.Abort(3) // returns: the caller exits itself
	if err := c.Finalize(); err != nil {
		t.Error(err)
	}
}
