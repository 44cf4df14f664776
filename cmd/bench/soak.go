package main

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"time"

	"lipformer/kernel"
	"lipformer/model"
	"lipformer/train"
)

// modeSoak is the mode of a soak report: many training steps, watching the live heap.
const modeSoak = "soak"

// soakParts is how many equal parts the checkpoints divide a soak's steps into.
const soakParts = 4

// soakPoint is the live heap after a full GC (settledHeap) once a soak has run Step steps
// after its warm-up.
type soakPoint struct {
	Step     int    `json:"step"`
	HeapLive uint64 `json:"heap_live"`
}

// soakReport is one soak (-soak N) of a configuration and architecture: N training steps
// (train.Stepper, as timeTrain, on the job's batch) after the warm-up, with the live heap
// at the start, at every quarter and at the end. One JSON object of the output.
type soakReport struct {
	Impl          string      `json:"impl"`    // go
	Config        string      `json:"config"`  // preset name
	Arch          string      `json:"arch"`    // model architecture
	Mode          string      `json:"mode"`    // soak
	Dtype         string      `json:"dtype"`   // float32 or float64
	Backend       string      `json:"backend"` // the BLAS of the build (kernel.Backend)
	Threads       int         `json:"threads"` // GOMAXPROCS
	Batch         int         `json:"batch"`   // sequences per step
	Context       int         `json:"context"` // T
	Params        int         `json:"params"`  // scalar parameters of the model
	Steps         int         `json:"steps"`   // soaked training steps, N
	Warmup        int         `json:"warmup"`  // untimed steps before them
	Seconds       float64     `json:"seconds"` // wall time of the N steps, without the heap checkpoints
	MsPerStep     float64     `json:"ms_per_step"`
	BytesPerStep  float64     `json:"bytes_per_step"`  // heap bytes allocated per step, mean over the N steps
	AllocsPerStep float64     `json:"allocs_per_step"` // heap objects allocated per step, mean over the N steps
	Heap          []soakPoint `json:"heap"`            // live heap at step 0 (after warm-up), every N/4 steps and N
	HeapLiveStart uint64      `json:"heap_live_start"` // Heap[0]
	HeapLiveEnd   uint64      `json:"heap_live_end"`   // the last of Heap
	HeapGrowth    int64       `json:"heap_growth"`     // HeapLiveEnd - HeapLiveStart, bytes
	LossStart     float64     `json:"loss_start"`      // loss of the first soaked step
	LossEnd       float64     `json:"loss_end"`        // loss of the last soaked step
	GoVersion     string      `json:"go_version"`
}

// soakCheckpoints are the step counts after which a soak of n steps reads the live heap:
// 0, every n/soakParts steps (rounded down, without repeats) and n.
func soakCheckpoints(n int) []int {
	cps := []int{0}
	for k := 1; k <= soakParts; k++ {
		if s := k * n / soakParts; s > cps[len(cps)-1] {
			cps = append(cps, s)
		}
	}
	return cps
}

// runSoak soaks every selected configuration and architecture and prints the reports.
func runSoak(ctx context.Context, o options, out *printer) error {
	if err := out.soakHeader(o); err != nil {
		return err
	}
	for _, p := range o.presets {
		for _, arch := range o.archs {
			j := newJob(p, arch, o)
			r, err := j.soak(ctx)
			if err != nil {
				return fmt.Errorf("%s %s soak: %w", p.Name, arch, err)
			}
			if err := out.soak(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// soak runs o.soak training steps of the job on a fresh model (initialised from the seed).
func (j job) soak(ctx context.Context) (soakReport, error) {
	m, err := model.New(j.cfg, j.opt.seed)
	if err != nil {
		return soakReport{}, err
	}
	r := soakReport{Impl: "go", Config: j.p.Name, Arch: j.cfg.Arch, Mode: modeSoak, Dtype: j.cfg.Dtype, Backend: kernel.Backend,
		Threads: runtime.GOMAXPROCS(0), Batch: j.p.Batch, Context: j.cfg.Context, Params: m.NumParams(),
		Steps: j.opt.soak, Warmup: j.opt.warmup, GoVersion: runtime.Version()}
	if j.cfg.Dtype == "float64" {
		err = soakTrain[float64](ctx, m, j, &r)
	} else {
		err = soakTrain[float32](ctx, m, j, &r)
	}
	return r, err
}

// soakTrain runs the warm-up and the soaked steps of timeTrain's training on the job's
// batch and fills r's measurements. The allocation counters and the clock cover the steps
// only, not the collections at the checkpoints.
func soakTrain[T train.Float](ctx context.Context, m *model.Model, j job, r *soakReport) error {
	st, lr, err := jobStepper[T](m, j)
	if err != nil {
		return err
	}
	defer st.Close()
	step := 0
	for ; step < j.opt.warmup; step++ {
		if _, _, err := st.Step(step, lr); err != nil {
			return err
		}
	}
	var bytes, allocs uint64
	var elapsed time.Duration
	done := 0
	for _, cp := range soakCheckpoints(j.opt.soak) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		t0 := time.Now()
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
		elapsed += time.Since(t0)
		runtime.ReadMemStats(&after)
		bytes += after.TotalAlloc - before.TotalAlloc
		allocs += after.Mallocs - before.Mallocs
		r.Heap = append(r.Heap, soakPoint{Step: cp, HeapLive: settledHeap()})
	}
	n := float64(j.opt.soak)
	r.Seconds = elapsed.Seconds()
	r.MsPerStep = 1e3 * r.Seconds / n
	r.BytesPerStep, r.AllocsPerStep = float64(bytes)/n, float64(allocs)/n
	r.HeapLiveStart, r.HeapLiveEnd = r.Heap[0].HeapLive, r.Heap[len(r.Heap)-1].HeapLive
	r.HeapGrowth = int64(r.HeapLiveEnd) - int64(r.HeapLiveStart)
	return nil
}

// soakHeader describes the soak table (tables only: every JSON object carries the settings).
func (p *printer) soakHeader(o options) error {
	if p.json {
		return nil
	}
	_, err := fmt.Fprintf(p.w, "%s %s/%s, BLAS %s, GOMAXPROCS %d, %s, soak: %d training steps (train.Stepper) after %d warm-up\n"+
		"MB/step and allocs are heap bytes and objects allocated per step, mean over the soak;\n"+
		"live heap is after a full GC at steps 0 (after warm-up), %s; growth is end - start\n\n"+
		"%-4s %-14s %7s %9s %8s %9s %-40s %9s %15s\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, kernel.Backend, runtime.GOMAXPROCS(0), o.dtype, o.soak, o.warmup,
		checkpointList(o.soak),
		"conf", "arch", "steps", "ms/step", "MB/step", "allocs", "live heap MB at the checkpoints", "growth MB", "loss start->end")
	return err
}

// checkpointList names the checkpoints after step 0 of a soak of n steps.
func checkpointList(n int) string {
	var s []string
	for _, cp := range soakCheckpoints(n)[1:] {
		s = append(s, fmt.Sprint(cp))
	}
	return strings.Join(s, ", ")
}

// soak prints one soak report.
func (p *printer) soak(r soakReport) error {
	if err := p.record(r); err != nil {
		return err
	}
	if p.json {
		return json.NewEncoder(p.w).Encode(r)
	}
	heap := make([]string, len(r.Heap))
	for i, h := range r.Heap {
		heap[i] = fmt.Sprintf("%.1f", float64(h.HeapLive)/1e6)
	}
	_, err := fmt.Fprintf(p.w, "%-4s %-14s %7d %9.1f %8.2f %9.0f %-40s %+9.2f %15s\n",
		r.Config, r.Arch, r.Steps, r.MsPerStep, r.BytesPerStep/1e6, r.AllocsPerStep, strings.Join(heap, " -> "),
		float64(r.HeapGrowth)/1e6, fmt.Sprintf("%.3f->%.3f", r.LossStart, r.LossEnd))
	return err
}
