package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"

	"lipformer/kernel"
)

// Printer writes the records of a run (Measurement, Comparison, LossCheck, SoakReport,
// Pooled) to W as JSON lines or as tables, and as JSON lines to Also.
type Printer struct {
	W    io.Writer
	JSON bool
	Also io.Writer // or nil
}

// record writes v as a JSON line to also.
func (p *Printer) record(v any) error {
	if p.Also == nil {
		return nil
	}
	return json.NewEncoder(p.Also).Encode(v)
}

// Header describes the build and the settings (tables only: every JSON object carries them).
func (p *Printer) Header(s Settings) error {
	if p.JSON {
		return nil
	}
	_, err := fmt.Fprintf(p.W, "%s %s/%s, BLAS %s, GOMAXPROCS %d, %s, median of %d timed runs after %d warm-up\n"+
		"train: forward + backward + clip + AdamW (train.Stepper); eval: forward-only batch;\n"+
		"sample: %s, %d sequences in step (model.GenerateBatch, KV cache),\n"+
		"        PyTorch one token per run (a forward over the full window, no cache)\n"+
		"ns/tok is per position computed; ns/gen is per generated token (sample);\n"+
		"x train is the training step's ns/tok over this one's ns/tok, for sample over its ns/gen;\n"+
		"MB/run and allocs are heap bytes and objects allocated per timed run; live heap is before -> after the timed runs\n\n"+
		"%-5s %-4s %-20s %-6s %10s %19s %9s %8s %8s %9s %9s %15s %8s %9s %7s\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, kernel.Backend, runtime.GOMAXPROCS(0), s.Dtype, s.Steps, s.Warmup, sampleRunText(s.SampleWindow), s.SampleBatch,
		"impl", "conf", "arch", "mode", "ms", "min..max ms", "tok/s", "GFLOP", "GFLOP/s", "MB/run", "allocs", "live heap MB", "ns/tok", "ns/gen", "x train")
	return err
}

// sampleRunText says what one timed run of the sample mode generates.
func sampleRunText(window string) string {
	if window == SampleWindowNone {
		return "Go generates T tokens per run from a 1-byte prompt, within the context (no re-prefill)"
	}
	return fmt.Sprintf("Go runs %d cycles of window shift per run (a prefill of T/2+1 positions, then steps to T)", SampleCycles)
}

// Measurement prints one measurement.
func (p *Printer) Measurement(r Measurement) error {
	if err := p.record(r); err != nil {
		return err
	}
	if p.JSON {
		return json.NewEncoder(p.W).Encode(r)
	}
	mem, allocs, heap := "-", "-", "-"
	if r.Impl == "go" {
		mem, allocs = fmt.Sprintf("%.1f", r.BytesPerStep/1e6), fmt.Sprintf("%.0f", r.AllocsPerStep)
		heap = fmt.Sprintf("%.0f->%.0f", float64(r.HeapLiveStart)/1e6, float64(r.HeapLiveEnd)/1e6)
	}
	speed, gen := "-", "-"
	if r.SpeedupVsTrain > 0 {
		speed = fmt.Sprintf("%.2f", r.SpeedupVsTrain)
	}
	if ns := r.NsPerGen(); ns > 0 {
		gen = fmt.Sprintf("%.0f", ns)
	}
	_, err := fmt.Fprintf(p.W, "%-5s %-4s %-20s %-6s %10.2f %19s %9.0f %8.3f %8.2f %9s %9s %15s %8.0f %9s %7s\n",
		r.Impl, r.Config, r.Arch, r.Mode, r.MsMedian, fmt.Sprintf("%.2f..%.2f", r.MsMin, r.MsMax), r.TokensPerS,
		r.GFLOP, r.GFLOPPerS, mem, allocs, heap, r.NsPerToken, gen, speed)
	if err == nil && r.PairedWith != "" {
		_, err = fmt.Fprintf(p.W, "%-32s over %s in the same round: %.3f (quartiles %.3f..%.3f, %d rounds)\n",
			"", r.PairedWith, r.PairedMedian, r.PairedQ1, r.PairedQ3, r.Steps)
	}
	return err
}

// Summary prints the Go/PyTorch ratios and the loss checks.
func (p *Printer) Summary(comps []Comparison, checks []LossCheck) error {
	for _, c := range comps {
		if err := p.record(c); err != nil {
			return err
		}
	}
	for _, c := range checks {
		if err := p.record(c); err != nil {
			return err
		}
	}
	if p.JSON {
		enc := json.NewEncoder(p.W)
		for _, c := range comps {
			if err := enc.Encode(c); err != nil {
				return err
			}
		}
		for _, c := range checks {
			if err := enc.Encode(c); err != nil {
				return err
			}
		}
		return nil
	}
	if len(comps) > 0 {
		fmt.Fprintf(p.W, "\nGo / PyTorch median time (> 1: Go is slower; sample: per generated token, Go with its KV cache)\n%-4s %-20s %-6s %10s %10s %8s\n", "conf", "arch", "mode", "go ms", "torch ms", "ratio")
		for _, c := range comps {
			fmt.Fprintf(p.W, "%-4s %-20s %-6s %10.2f %10.2f %8.2f\n", c.Config, c.Arch, c.Mode, c.GoMs, c.TorchMs, c.Ratio)
		}
	}
	if len(checks) > 0 {
		fmt.Fprintf(p.W, "\nloss of the batch, Go vs PyTorch, same weights: at step 0 and after one training step on it (tolerance %.2g)\n"+
			"%-4s %-20s %-7s %13s %13s %9s %13s %13s %9s %s\n", checks[0].Tol,
			"conf", "arch", "dtype", "go step 0", "torch step 0", "|diff|", "go step 1", "torch step 1", "|diff|", "ok")
		for _, c := range checks {
			fmt.Fprintf(p.W, "%-4s %-20s %-7s %13.9f %13.9f %9.2g %13.9f %13.9f %9.2g %t\n",
				c.Config, c.Arch, c.Dtype, c.GoLoss, c.TorchLoss, c.AbsDiff, c.GoLoss1, c.TorchLoss1, c.AbsDiff1, c.OK)
		}
	}
	return nil
}

// SoakHeader describes the table of a soak of steps training steps after warmup (tables
// only: every JSON object carries the settings).
func (p *Printer) SoakHeader(dtype string, steps, warmup int) error {
	if p.JSON {
		return nil
	}
	_, err := fmt.Fprintf(p.W, "%s %s/%s, BLAS %s, GOMAXPROCS %d, %s, soak: %d training steps (train.Stepper) after %d warm-up\n"+
		"MB/step and allocs are heap bytes and objects allocated per step, mean over the soak;\n"+
		"live heap is after a full GC at steps 0 (after warm-up), %s; growth is end - start;\n"+
		"ms/step by quarter is the mean step time of each quarter of the soak; slowdown is the last quarter's over the first's\n\n"+
		"%-4s %-20s %7s %9s %8s %9s %-40s %9s %-36s %8s %15s\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, kernel.Backend, runtime.GOMAXPROCS(0), dtype, steps, warmup,
		checkpointList(steps),
		"conf", "arch", "steps", "ms/step", "MB/step", "allocs", "live heap MB at the checkpoints", "growth MB", "ms/step by quarter", "slowdown", "loss start->end")
	return err
}

// checkpointList names the checkpoints after step 0 of a soak of n steps.
func checkpointList(n int) string {
	var s []string
	for _, cp := range SoakCheckpoints(n)[1:] {
		s = append(s, fmt.Sprint(cp))
	}
	return strings.Join(s, ", ")
}

// Soak prints one soak report.
func (p *Printer) Soak(r SoakReport) error {
	if err := p.record(r); err != nil {
		return err
	}
	if p.JSON {
		return json.NewEncoder(p.W).Encode(r)
	}
	heap := make([]string, len(r.Heap))
	var quarters []string
	for i, h := range r.Heap {
		heap[i] = fmt.Sprintf("%.1f", float64(h.HeapLive)/1e6)
		if i > 0 {
			quarters = append(quarters, fmt.Sprintf("%.1f", h.MsPerStep))
		}
	}
	_, err := fmt.Fprintf(p.W, "%-4s %-20s %7d %9.1f %8.2f %9.0f %-40s %+9.2f %-36s %8.2f %15s\n",
		r.Config, r.Arch, r.Steps, r.MsPerStep, r.BytesPerStep/1e6, r.AllocsPerStep, strings.Join(heap, " -> "),
		float64(r.HeapGrowth)/1e6, strings.Join(quarters, " -> "), r.Slowdown, fmt.Sprintf("%.3f->%.3f", r.LossStart, r.LossEnd))
	return err
}

// PrintPool prints the pooled table (or JSON lines) of the files (Pool).
func (out *Printer) PrintPool(paths []string) error {
	ps, backends, err := Pool(paths)
	if err != nil {
		return err
	}
	if !out.JSON {
		fmt.Fprintf(out.W, "pooled over %d files: Go's median per BLAS backend, PyTorch's median over all its runs; ms per run (sample: per generated token)\n"+
			"ratio = Go / PyTorch (> 1: Go is slower), then the range of the ratios to the PyTorch run of the same file;\n"+
			"x train = Go's training step's median ns per position over eval's (per position) or sample's (per generated token), then the range within files\n\n", len(paths))
		fmt.Fprintf(out.W, "%-4s %-20s %-6s", "conf", "arch", "mode")
		for _, b := range backends {
			fmt.Fprintf(out.W, " %18s", "go "+b+" ms (n)")
		}
		fmt.Fprintf(out.W, " %16s", "torch ms (n)")
		for _, b := range backends {
			fmt.Fprintf(out.W, " %22s", b+" ratio (range)")
		}
		for _, b := range backends {
			fmt.Fprintf(out.W, " %24s", b+" x train (range)")
		}
		fmt.Fprintln(out.W)
	}
	for _, p := range ps {
		if err := out.record(p); err != nil {
			return err
		}
		if out.JSON {
			if err := json.NewEncoder(out.W).Encode(p); err != nil {
				return err
			}
			continue
		}
		var sb strings.Builder
		fmt.Fprintf(&sb, "%-4s %-20s %-6s", p.Config, p.Arch, p.Mode)
		for _, b := range backends {
			fmt.Fprintf(&sb, " %18s", cell(p.GoMs[b], p.GoRuns[b]))
		}
		fmt.Fprintf(&sb, " %16s", cell(p.TorchMs, p.TorchRuns))
		for _, b := range backends {
			fmt.Fprintf(&sb, " %22s", rangeCell(b, p.Ratio, p.RatioMin, p.RatioMax))
		}
		for _, b := range backends {
			fmt.Fprintf(&sb, " %24s", rangeCell(b, p.VsTrain, p.VsTrainMin, p.VsTrainMax))
		}
		if _, err := fmt.Fprintln(out.W, sb.String()); err != nil {
			return err
		}
	}
	return nil
}

// rangeCell formats backend b's pooled ratio and the range of the ratios within runs,
// "-" for none.
func rangeCell(b string, v, lo, hi map[string]float64) string {
	x, ok := v[b]
	if !ok {
		return "-"
	}
	if _, ok := lo[b]; !ok {
		return fmt.Sprintf("%.2f", x)
	}
	return fmt.Sprintf("%.2f (%.2f..%.2f)", x, lo[b], hi[b])
}

// cell formats a pooled time and its number of runs, or "-" for none.
func cell(ms float64, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.4g (%d)", ms, n)
}
