package model_test

import (
	"testing"

	"lipformer/bench"
	"lipformer/model"
	"lipformer/spec"
)

// BenchmarkTrain times a training step (forward, backward, clip, AdamW: train.Stepper, the
// trainer's code path) of every preset and of dp, l2 and invertible-l2, as cmd/bench's
// train mode: go test ./model -run '^$' -bench 'Train/P2'.
func BenchmarkTrain(b *testing.B) { benchmarkMode(b, bench.ModeTrain) }

// BenchmarkEval times a forward-only Eval program on the training batch, as cmd/bench's
// eval mode.
func BenchmarkEval(b *testing.B) { benchmarkMode(b, bench.ModeEval) }

// BenchmarkSample times sampling one sequence with the decoder's key/value cache over 4
// cycles of the shift window per run, as cmd/bench's sample mode; tok/s counts the
// positions computed, gen/s the tokens generated.
func BenchmarkSample(b *testing.B) { benchmarkMode(b, bench.ModeSample) }

// BenchmarkTrainRecipe times a training step of P2 (nanoGPT's CPU example, the Tiny
// Shakespeare recipe's shape) for dp and the certified recipes (spec.Model.WithCertifiedRecipe):
// contractive-l2, invertible-l2 with 1, 4 and 8 MLP sub-blocks per block (8 is the
// recipe), configs/shakespeare_inv.toml's 8 layers of 4 MLP sub-blocks of width 64
// (invertible-l2-l8m4) and configs/shakespeare_inv_wall.toml's 6 layers of width 96 with 4 of
// width 48 (invertible-l2-l6w96), as the trainer runs them, with a run's eight power
// iterations per step (bench's train mode): go test ./model -run '^$' -bench TrainRecipe
// -cpuprofile cpu.prof.
func BenchmarkTrainRecipe(b *testing.B) {
	p, err := model.FindPresets("P2")
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name          string
		arch          spec.Arch
		mlps          int
		layers, width int // 0: the preset's
		hidden        int // 0: 4 width shared by the block's MLPs
	}{{"dp", spec.DP, 0, 0, 0, 0}, {"contractive-l2", spec.ContractiveL2, 0, 0, 0, 0}, {"invertible-l2-m1", spec.InvertibleL2, 1, 0, 0, 0},
		{"invertible-l2-m4", spec.InvertibleL2, 4, 0, 0, 0}, {"invertible-l2-m8", spec.InvertibleL2, 8, 0, 0, 0},
		{"invertible-l2-l8m4", spec.InvertibleL2, 4, 8, 0, 64}, {"invertible-l2-l6w96", spec.InvertibleL2, 4, 6, 96, 48}} {
		b.Run(c.name, func(b *testing.B) {
			j := bench.NewJob(p[0], c.arch, bench.Settings{Seed: 1, Dtype: spec.Float32})
			j.Cfg.Hidden, j.Cfg.MLPBlocks = c.hidden, c.mlps
			if c.layers > 0 {
				j.Cfg.Layers = c.layers
			}
			if c.width > 0 {
				j.Cfg.Width = c.width
			}
			j.Cfg = j.Cfg.WithCertifiedRecipe()
			runWorkload(b, j, bench.ModeTrain)
		})
	}
}

// BenchmarkPowerIterate times Model.PowerIterate with a run's eight steps (train
// -power-iters) on fresh P2 models of the certified recipes, the work before each of their
// training steps, warm in cache: go test ./model -run '^$' -bench PowerIterate -cpu 1,2.
func BenchmarkPowerIterate(b *testing.B) {
	p, err := model.FindPresets("P2")
	if err != nil {
		b.Fatal(err)
	}
	for _, arch := range []spec.Arch{spec.ContractiveL2, spec.InvertibleL2} {
		b.Run(arch.String(), func(b *testing.B) {
			j := bench.NewJob(p[0], arch, bench.Settings{Seed: 1, Dtype: spec.Float32, Recipe: true})
			m, err := model.New(j.Cfg, 1)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				m.PowerIterate(8)
			}
		})
	}
}

// benchmarkMode runs a sub-benchmark per preset and architecture of one mode (the
// workloads of bench.Job.Workload, float32, seed 1), reported by runWorkload.
func benchmarkMode(b *testing.B, mode string) {
	for _, p := range model.Presets() {
		for _, arch := range []spec.Arch{spec.DP, spec.L2, spec.InvertibleL2} {
			b.Run(p.Name+"/"+arch.String(), func(b *testing.B) {
				j := bench.NewJob(p, arch, bench.Settings{Seed: 1, Dtype: spec.Float32, SampleBatch: 1, SampleWindow: string(model.Shift)})
				runWorkload(b, j, mode)
			})
		}
	}
}

// runWorkload times j's workload of one mode and reports positions per second (tok/s),
// the matrix-product GFLOP/s of model.CountFLOPs or CountFillFLOPs, generated tokens per
// second for sampling, and the allocations per run.
func runWorkload(b *testing.B, j bench.Job, mode string) {
	w, err := j.Workload(mode)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	b.ReportAllocs()
	runs := 0
	for b.Loop() {
		if err := w.Run(runs); err != nil {
			b.Fatal(err)
		}
		runs++
	}
	s := b.Elapsed().Seconds()
	b.ReportMetric(float64(runs*w.Positions)/s, "tok/s")
	b.ReportMetric(float64(runs)*w.FLOPs/1e9/s, "GFLOP/s")
	if w.Generated > 0 {
		b.ReportMetric(float64(runs*w.Generated)/s, "gen/s")
	}
}
