package ref

import (
	"math"
	"testing"
)

func TestCrossEntropyHandComputed(t *testing.T) {
	// Uniform logits over V = 4: log 4 whatever the target.
	got, err := CrossEntropy([][]float64{{5, 5, 5, 5}, {0, 0, 0, 0}}, []int{0, 3})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-math.Log(4)) > 1e-15 {
		t.Errorf("uniform CE = %v, want log 4 = %v", got, math.Log(4))
	}
	// Probabilities 1/4, 3/4: target 1 costs log(4/3), target 0 costs log 4.
	logits := [][]float64{{0, math.Log(3)}, {0, math.Log(3)}, {100, -100}}
	got, err = CrossEntropy(logits, []int{1, 0, -1})
	if err != nil {
		t.Fatal(err)
	}
	want := (math.Log(4.0/3) + math.Log(4)) / 2
	if math.Abs(got-want) > 1e-15 {
		t.Errorf("CE with an ignored target = %v, want %v (mean over the 2 counted)", got, want)
	}
}

func TestCrossEntropyErrors(t *testing.T) {
	logits := [][]float64{{0, 1}, {1, 0}}
	if _, err := CrossEntropy(logits, []int{-1, -1}); err == nil {
		t.Error("all targets ignored: want error")
	}
	if _, err := CrossEntropy(logits, []int{0, 2}); err == nil {
		t.Error("target 2 with V = 2: want error")
	}
	if _, err := CrossEntropy(logits, []int{0}); err == nil {
		t.Error("1 target for N = 2: want error")
	}
}
