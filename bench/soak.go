package bench

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"lipformer/kernel"
	"lipformer/model"
	"lipformer/spec"
	"lipformer/train"
)

// ModeSoak is the mode of a soak report: many training steps, watching the live heap.
const ModeSoak = "soak"

// soakParts is how many equal parts the checkpoints divide a soak's steps into.
const soakParts = 4

// SoakPoint is the live heap after a full GC (settledHeap) once a soak has run Step steps
// after its warm-up, and the mean step time of the steps since the checkpoint before (0 at
// step 0).
type SoakPoint struct {
	Step      int     `json:"step"`
	HeapLive  uint64  `json:"heap_live"`
	MsPerStep float64 `json:"ms_per_step,omitempty"`
}

// SoakReport is one soak of a configuration and architecture: N training steps
// (train.Stepper, as the train mode, on the job's batch) after the warm-up, with the live heap
// at the start, at every quarter and at the end, and the step time of every quarter: a
// step that slows as training goes on (subnormal floats, docs/performance.md) shows in
// Slowdown, as a leak shows in HeapGrowth. One JSON object of the output.
type SoakReport struct {
	Impl          string      `json:"impl"`                 // go
	Config        string      `json:"config"`               // preset name
	Arch          string      `json:"arch"`                 // model architecture
	Mode          string      `json:"mode"`                 // soak
	Dtype         string      `json:"dtype"`                // float32 or float64
	Backend       string      `json:"backend"`              // the BLAS of the build (kernel.Backend)
	Threads       int         `json:"threads"`              // GOMAXPROCS
	Batch         int         `json:"batch"`                // sequences per step
	Context       int         `json:"context"`              // T
	Params        int         `json:"params"`               // scalar parameters of the model
	Steps         int         `json:"steps"`                // soaked training steps, N
	Warmup        int         `json:"warmup"`               // untimed steps before them
	PowerIters    int         `json:"power_iters"`          // power-iteration steps before each training step
	Checkpoint    string      `json:"checkpoint,omitempty"` // the file the weights came from (CheckpointJob), or "" for a fresh model
	Seconds       float64     `json:"seconds"`              // wall time of the N steps, without the heap checkpoints
	MsPerStep     float64     `json:"ms_per_step"`
	BytesPerStep  float64     `json:"bytes_per_step"`  // heap bytes allocated per step, mean over the N steps
	AllocsPerStep float64     `json:"allocs_per_step"` // heap objects allocated per step, mean over the N steps
	Heap          []SoakPoint `json:"heap"`            // live heap at step 0 (after warm-up), every N/4 steps and N
	HeapLiveStart uint64      `json:"heap_live_start"` // Heap[0]
	HeapLiveEnd   uint64      `json:"heap_live_end"`   // the last of Heap
	HeapGrowth    int64       `json:"heap_growth"`     // HeapLiveEnd - HeapLiveStart, bytes
	Slowdown      float64     `json:"slowdown"`        // the last quarter's ms/step over the first's
	LossStart     float64     `json:"loss_start"`      // loss of the first soaked step
	LossEnd       float64     `json:"loss_end"`        // loss of the last soaked step
	GoVersion     string      `json:"go_version"`
}

// SoakCheckpoints are the step counts after which a soak of n steps reads the live heap:
// 0, every n/soakParts steps (rounded down, without repeats) and n.
func SoakCheckpoints(n int) []int {
	cps := []int{0}
	for k := 1; k <= soakParts; k++ {
		if s := k * n / soakParts; s > cps[len(cps)-1] {
			cps = append(cps, s)
		}
	}
	return cps
}

// Soak runs n training steps of the job on its model (a fresh one, or the checkpoint's),
// after Set.Warmup untimed ones.
func (j Job) Soak(ctx context.Context, n int) (SoakReport, error) {
	if n < 1 {
		return SoakReport{}, fmt.Errorf("soak of %d steps, want >= 1", n)
	}
	m, err := j.newModel()
	if err != nil {
		return SoakReport{}, err
	}
	r := SoakReport{Impl: "go", Config: j.Preset.Name, Arch: j.ArchName(), Mode: ModeSoak, Dtype: j.Cfg.Dtype.String(), Backend: kernel.Backend,
		Threads: runtime.GOMAXPROCS(0), Batch: j.Preset.Batch, Context: j.Cfg.Context, Params: m.NumParams(),
		Steps: n, Warmup: j.Set.Warmup, PowerIters: j.stepOptions().iterations(), Checkpoint: j.Checkpoint, GoVersion: runtime.Version()}
	if j.Cfg.Dtype == spec.Float64 {
		err = soakTrain[float64](ctx, m, j, &r)
	} else {
		err = soakTrain[float32](ctx, m, j, &r)
	}
	return r, err
}

// soakTrain runs the warm-up and the r.Steps soaked steps of the train mode's training on
// the job's batch and fills r's measurements. The allocation counters and the clock cover the steps
// only, not the collections at the checkpoints.
func soakTrain[T train.Float](ctx context.Context, m *model.Model, j Job, r *SoakReport) error {
	st, lr, err := jobStepper[T](m, j)
	if err != nil {
		return err
	}
	defer st.Close()
	step := 0
	for ; step < j.Set.Warmup; step++ {
		if _, _, err := st.Step(step, lr); err != nil {
			return err
		}
	}
	var bytes, allocs uint64
	var elapsed time.Duration
	done := 0
	for _, cp := range SoakCheckpoints(r.Steps) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		t0, from := time.Now(), done
		for ; done < cp; done++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			loss, _, err := st.Step(step, lr)
			if err != nil {
				return err
			}
			if done == 0 {
				r.LossStart = loss
			}
			r.LossEnd = loss
			step++
		}
		took := time.Since(t0)
		elapsed += took
		runtime.ReadMemStats(&after)
		bytes += after.TotalAlloc - before.TotalAlloc
		allocs += after.Mallocs - before.Mallocs
		pt := SoakPoint{Step: cp, HeapLive: settledHeap()}
		if cp > from {
			pt.MsPerStep = 1e3 * took.Seconds() / float64(cp-from)
		}
		r.Heap = append(r.Heap, pt)
	}
	n := float64(r.Steps)
	r.Seconds = elapsed.Seconds()
	r.MsPerStep = 1e3 * r.Seconds / n
	r.BytesPerStep, r.AllocsPerStep = float64(bytes)/n, float64(allocs)/n
	r.HeapLiveStart, r.HeapLiveEnd = r.Heap[0].HeapLive, r.Heap[len(r.Heap)-1].HeapLive
	r.HeapGrowth = int64(r.HeapLiveEnd) - int64(r.HeapLiveStart)
	if len(r.Heap) > 2 {
		r.Slowdown = r.Heap[len(r.Heap)-1].MsPerStep / r.Heap[1].MsPerStep
	}
	return nil
}
