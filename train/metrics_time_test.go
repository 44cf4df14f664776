package train

import (
	"math"
	"testing"
)

func TestTimeContinuesAcrossResume(t *testing.T) {
	// Steps 0-2 run in a first session, which validates after 3 steps at 3.2 s and is
	// interrupted; the resumed session's clock restarts for steps 3 and 4 and validates
	// after 5 steps.
	m := Metrics{
		Train: []TrainRow{{Step: 0, ElapsedS: 1}, {Step: 1, ElapsedS: 2}, {Step: 2, ElapsedS: 3},
			{Step: 3, ElapsedS: 0.5}, {Step: 4, ElapsedS: 1.5}},
		Eval: []EvalRow{{Step: 3, ElapsedS: 3.2}, {Step: 5, ElapsedS: 2}},
	}
	trainT, evalT := m.Times()
	if want := []float64{1, 2, 3, 3.7, 4.7}; !near(trainT, want) {
		t.Errorf("training times %v, want %v", trainT, want)
	}
	if want := []float64{3.2, 5.2}; !near(evalT, want) {
		t.Errorf("evaluation times %v, want %v", evalT, want)
	}
	if got := m.EarlierSessions(); math.Abs(got-3.2) > 1e-12 {
		t.Errorf("earlier sessions took %g s, want 3.2 (the validation ends the first)", got)
	}
}

func TestTimeOfEarlierSessions(t *testing.T) {
	m := Metrics{Train: []TrainRow{{Step: 0, ElapsedS: 1}, {Step: 1, ElapsedS: 2.5}, {Step: 2, ElapsedS: 0.4},
		{Step: 3, ElapsedS: 1.2}, {Step: 4, ElapsedS: 0.3}}}
	if got := m.EarlierSessions(); math.Abs(got-3.7) > 1e-12 {
		t.Errorf("earlier sessions took %g s, want 2.5 + 1.2", got)
	}
	if got := (Metrics{Train: m.Train[:2]}).EarlierSessions(); got != 0 {
		t.Errorf("a run of one session: %g s before it, want 0", got)
	}
	if got := (Metrics{}).EarlierSessions(); got != 0 {
		t.Errorf("an empty log: %g s before it, want 0", got)
	}
}

func near(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-12 {
			return false
		}
	}
	return true
}
