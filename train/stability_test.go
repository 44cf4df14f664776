package train

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// observeAll feeds losses (with gradient norm 1 unless norms is given) to a
// new accumulator with cfg and returns its summary.
func observeAll(t *testing.T, cfg StabilityConfig, losses, norms []float64) StabilitySummary {
	t.Helper()
	s, err := NewStability(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range losses {
		n := 1.0
		if norms != nil {
			n = norms[i]
		}
		s.Observe(i, l, n)
	}
	return s.Summary()
}

// refSpikes counts spikes by brute force: for each finite loss, sort the
// previous W finite losses and compare with k times their median.
func refSpikes(losses []float64, k float64, w int) (count, first int) {
	first = -1
	var finite []float64
	for step, l := range losses {
		if math.IsNaN(l) || math.IsInf(l, 0) {
			continue
		}
		if n := len(finite); n > 0 {
			prev := slices.Sorted(slices.Values(finite[max(0, n-w):]))
			m := len(prev)
			median := prev[m/2]
			if m%2 == 0 {
				median = (prev[m/2-1] + prev[m/2]) / 2
			}
			if l > k*median {
				if count == 0 {
					first = step
				}
				count++
			}
		}
		finite = append(finite, l)
	}
	return count, first
}

func TestStabilityCleanRun(t *testing.T) {
	var losses, norms []float64
	for i := range 500 {
		losses = append(losses, 1+4.5*math.Exp(-float64(i)/60)+0.05*math.Sin(float64(i)))
		norms = append(norms, 2+math.Cos(float64(i)/7)+float64(i%97)/100)
	}
	got := observeAll(t, DefaultStabilityConfig(), losses, norms)
	maxNorm := slices.Max(norms)
	want := StabilitySummary{
		Steps: 500, FirstNonFiniteStep: -1, FirstSpikeStep: -1,
		MaxGradNorm: maxNorm, MaxGradNormStep: slices.Index(norms, maxNorm),
		InitialLoss: losses[0], FinalLoss: losses[499], SpikeFactor: 2, SpikeWindow: 100,
	}
	if got != want {
		t.Fatalf("summary\n %+v\nwant\n %+v", got, want)
	}
}

func TestStabilitySlidingWindow(t *testing.T) {
	// W = 3, k = 2. Step 3: previous {1,1,1}, median 1: spike. Step 4:
	// {1,1,10}, median 1: spike. Step 5: {1,10,10}, median 10: not a spike.
	got := observeAll(t, StabilityConfig{SpikeFactor: 2, SpikeWindow: 3}, []float64{1, 1, 1, 10, 10, 10, 10}, nil)
	if got.LossSpikes != 2 || got.FirstSpikeStep != 3 || !got.Diverged {
		t.Fatalf("%d spikes from step %d, diverged %v; want 2 from step 3, diverged", got.LossSpikes, got.FirstSpikeStep, got.Diverged)
	}
	// W = 2: the median of {2, 3} is 2.5, so 5.5 is a spike; 5 and 4.9 are not.
	for _, c := range []struct {
		last   float64
		spikes int
	}{{5.5, 1}, {4.9, 0}, {5, 0}} {
		got := observeAll(t, StabilityConfig{SpikeFactor: 2, SpikeWindow: 2}, []float64{2, 3, c.last}, nil)
		if got.LossSpikes != c.spikes {
			t.Errorf("losses 2, 3, %v: %d spikes, want %d", c.last, got.LossSpikes, c.spikes)
		}
	}
}

func TestStabilitySpikesMatchBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for trial := range 20 {
		cfg := StabilityConfig{SpikeFactor: 1.5 + rng.Float64(), SpikeWindow: 1 + rng.IntN(40)}
		losses := make([]float64, 400)
		for i := range losses {
			losses[i] = 3 * math.Exp(-float64(i)/200) * (1 + 0.1*rng.Float64())
			switch r := rng.Float64(); {
			case r < 0.05:
				losses[i] *= 1 + 3*rng.Float64() // a jump, often a spike
			case r < 0.07:
				losses[i] = math.NaN()
			case r < 0.08:
				losses[i] = math.Inf(1)
			}
		}
		got := observeAll(t, cfg, losses, nil)
		count, first := refSpikes(losses, cfg.SpikeFactor, cfg.SpikeWindow)
		if count == 0 {
			t.Fatalf("trial %d: the sequence has no spikes to find", trial)
		}
		if got.LossSpikes != count || got.FirstSpikeStep != first {
			t.Fatalf("trial %d (%+v): %d spikes from step %d, brute force %d from %d",
				trial, cfg, got.LossSpikes, got.FirstSpikeStep, count, first)
		}
	}
}

func TestStabilityNonFinite(t *testing.T) {
	losses := []float64{3, 2.9, 2.8, 2.7, math.NaN(), 2.6, math.Inf(1)}
	norms := []float64{1, 5, math.Inf(1), 2, math.NaN(), 1, 1}
	got := observeAll(t, DefaultStabilityConfig(), losses, norms)
	if got.NonFiniteSteps != 3 || got.FirstNonFiniteStep != 2 || !got.Diverged {
		t.Fatalf("%d non-finite steps from %d, diverged %v; want 3 from step 2, diverged",
			got.NonFiniteSteps, got.FirstNonFiniteStep, got.Diverged)
	}
	if got.MaxGradNorm != 5 || got.MaxGradNormStep != 1 || got.LossSpikes != 0 {
		t.Fatalf("max grad norm %v at %d, %d spikes; want 5 at 1, none", got.MaxGradNorm, got.MaxGradNormStep, got.LossSpikes)
	}
	// A non-finite step ends a run as diverged even if the last loss is low.
	got = observeAll(t, DefaultStabilityConfig(), []float64{3, math.NaN(), 1}, nil)
	if !got.Diverged || got.FirstNonFiniteStep != 1 {
		t.Fatalf("diverged %v, first non-finite %d; want true, 1", got.Diverged, got.FirstNonFiniteStep)
	}
}

func TestStabilityDivergingWithoutSpikes(t *testing.T) {
	var losses []float64
	for i := range 200 {
		losses = append(losses, 2+float64(i)/100) // creeps up from 2 to 3.99
	}
	got := observeAll(t, DefaultStabilityConfig(), losses, nil)
	if !got.Diverged || got.LossSpikes != 0 || got.NonFiniteSteps != 0 {
		t.Fatalf("%+v: want diverged with no spikes and all finite", got)
	}
}

func TestStabilitySummaryJSON(t *testing.T) {
	got := observeAll(t, DefaultStabilityConfig(), []float64{math.Inf(1), 3, math.NaN()}, []float64{1, math.NaN(), 2})
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"initial_loss":"+Inf"`, `"final_loss":"NaN"`, `"diverged":true`, `"nonfinite_steps":3`,
		`"first_nonfinite_step":0`, `"max_grad_norm":2`, `"first_spike_step":-1`, `"spike_window":100`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s does not contain %s", b, want)
		}
	}
	var back StabilitySummary
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(back.FinalLoss) || !math.IsInf(back.InitialLoss, 1) {
		t.Fatalf("losses read back as %v, %v", back.InitialLoss, back.FinalLoss)
	}
	back.FinalLoss, got.FinalLoss = 0, 0 // NaN != NaN
	if back != got {
		t.Fatalf("read back %+v, want %+v", back, got)
	}
}

func TestNewStabilityRejectsBadConfig(t *testing.T) {
	for _, cfg := range []StabilityConfig{{1, 10}, {math.NaN(), 10}, {math.Inf(1), 10}, {2, 0}} {
		if _, err := NewStability(cfg); err == nil || !strings.Contains(err.Error(), "stability: spike") {
			t.Errorf("%+v: error %v, want one about the spike settings", cfg, err)
		}
	}
}

func TestStabilityObserveDoesNotAllocate(t *testing.T) {
	s, err := NewStability(StabilityConfig{SpikeFactor: 2, SpikeWindow: 16})
	if err != nil {
		t.Fatal(err)
	}
	step := 0
	n := testing.AllocsPerRun(200, func() {
		s.Observe(step, 3+math.Sin(float64(step)), 1)
		step++
	})
	if n != 0 {
		t.Fatalf("Observe allocates %v times per step", n)
	}
}
