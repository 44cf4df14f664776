package train

import (
	"math"
	"strings"
	"testing"
)

// lrCase is the expected learning rate at one step.
type lrCase struct {
	step int
	want float64
}

// checkSchedule compares s at each case, to a few unit roundoffs.
func checkSchedule(t *testing.T, s Schedule, cases []lrCase) {
	t.Helper()
	for _, c := range cases {
		if got := s.LR(c.step); math.Abs(got-c.want) > 4e-16*c.want {
			t.Errorf("LR(%d) = %.17g, want %.17g", c.step, got, c.want)
		}
	}
}

func TestConstant(t *testing.T) {
	s, err := NewConstant(3e-4, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkSchedule(t, s, []lrCase{{-5, 3e-4}, {0, 3e-4}, {1, 3e-4}, {1 << 40, 3e-4}})
	s, err = NewConstant(3e-4, 2)
	if err != nil {
		t.Fatal(err)
	}
	checkSchedule(t, s, []lrCase{{-1, 1e-4}, {0, 1e-4}, {1, 2e-4}, {2, 3e-4}, {1000, 3e-4}})
}

func TestCosineBoundaries(t *testing.T) {
	// lr 1, min 0.1, warmup 4, decay done at 12: warmup (step+1)/5, then
	// 0.1 + 0.9*(1+cos(pi*(step-4)/8))/2.
	s, err := NewCosine(1, 0.1, 4, 12)
	if err != nil {
		t.Fatal(err)
	}
	checkSchedule(t, s, []lrCase{
		{-3, 0.2}, {0, 0.2}, {3, 0.8}, // warmup, last warmup step
		{4, 1},                          // end of warmup: the peak
		{6, 0.1 + 0.9*(2+math.Sqrt2)/4}, // a quarter of the way: cos(pi/4)
		{8, 0.55},                       // halfway: the mean of lr and minLR
		{10, 0.1 + 0.9*(2-math.Sqrt2)/4},
		{12, 0.1}, {13, 0.1}, {1 << 40, 0.1}, // the end of decay and after
	})
}

func TestCosineNanoGPTDefaults(t *testing.T) {
	// nanoGPT's train.py: learning_rate 6e-4, min_lr 6e-5, warmup_iters 2000,
	// lr_decay_iters 600000.
	s, err := NewCosine(6e-4, 6e-5, 2000, 600000)
	if err != nil {
		t.Fatal(err)
	}
	checkSchedule(t, s, []lrCase{
		{0, 6e-4 / 2001}, {1999, 6e-4 * 2000 / 2001}, {2000, 6e-4},
		{301000, 3.3e-4}, {600000, 6e-5}, {600001, 6e-5},
	})
	prev := math.Inf(1)
	for step := 2000; step <= 600000; step += 997 {
		lr := s.LR(step)
		if lr > prev {
			t.Fatalf("LR rises after warmup: LR(%d) = %v > %v", step, lr, prev)
		}
		prev = lr
	}
}

func TestInvSqrt(t *testing.T) {
	s, err := NewInvSqrt(1, 4)
	if err != nil {
		t.Fatal(err)
	}
	checkSchedule(t, s, []lrCase{{-1, 0.2}, {0, 0.2}, {3, 0.8}, {4, 1}, {16, 0.5}, {64, 0.25}, {36, 1.0 / 3}})
	s, err = NewInvSqrt(2, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkSchedule(t, s, []lrCase{{-1, 2}, {0, 2}, {1, 2}, {4, 1}, {100, 0.2}})
}

func TestNewSchedule(t *testing.T) {
	cfg := ScheduleConfig{LR: 1, MinLR: 0.1, Warmup: 4, DecayIters: 12}
	for _, c := range []struct {
		name string
		step int
		want float64
	}{{"constant", 8, 1}, {"cosine", 8, 0.55}, {"invsqrt", 16, 0.5}} {
		s, err := NewSchedule(c.name, cfg)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		checkSchedule(t, s, []lrCase{{c.step, c.want}})
	}
	_, err := NewSchedule("linear", cfg)
	if err == nil || !strings.Contains(err.Error(), `"linear"`) || !strings.Contains(err.Error(), "constant, cosine, invsqrt") {
		t.Fatalf("unknown name: error %v, want one naming it and listing the valid names", err)
	}
}

func TestSchedulesRejectBadSettings(t *testing.T) {
	tests := []struct {
		name string
		cfg  ScheduleConfig
		want string
	}{
		{"constant", ScheduleConfig{LR: 0}, "learning rate 0"},
		{"constant", ScheduleConfig{LR: math.NaN()}, "learning rate NaN"},
		{"invsqrt", ScheduleConfig{LR: math.Inf(1)}, "learning rate +Inf"},
		{"invsqrt", ScheduleConfig{LR: 1, Warmup: -1}, "warmup -1"},
		{"cosine", ScheduleConfig{LR: 1, MinLR: 2, DecayIters: 10}, "minimum learning rate 2"},
		{"cosine", ScheduleConfig{LR: 1, MinLR: -0.1, DecayIters: 10}, "minimum learning rate -0.1"},
		{"cosine", ScheduleConfig{LR: 1, Warmup: 10, DecayIters: 10}, "after warmup"},
	}
	for _, tt := range tests {
		_, err := NewSchedule(tt.name, tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %+v: error %v, want one mentioning %q", tt.name, tt.cfg, err, tt.want)
		}
	}
}
