package ref

import "testing"

func TestBallNormHandComputed(t *testing.T) {
	// Row [1, 2, 3] centres to [-1, 0, 1] of norm sqrt(2): inside a ball of radius 2, it is
	// unchanged; on the ball of radius 1 it becomes [-1, 0, 1]/sqrt(2). Row [5, 5, 5]
	// centres to 0.
	x := [][]float64{{1, 2, 3}, {5, 5, 5}}
	got, err := BallNorm(x, 2)
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, "BallNorm r=2", got, [][]float64{{-1, 0, 1}, {0, 0, 0}}, 1e-15)
	got, err = BallNorm(x, 1)
	if err != nil {
		t.Fatal(err)
	}
	h := 1 / 1.4142135623730951
	assertClose(t, "BallNorm r=1", got, [][]float64{{-h, 0, h}, {0, 0, 0}}, 1e-15)
	if _, err := BallNorm(x, 0); err == nil {
		t.Fatal("radius 0 accepted")
	}
}
