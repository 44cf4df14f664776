package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"lipformer/internal/stats"
)

// Pooled is one configuration, architecture and mode over several runs of cmd/bench (files
// of records, as its -o and bench/compare.sh write them): Go's median time per BLAS backend and
// PyTorch's over all runs, and their ratios. Times are ms per run, or for sample per
// generated token.
type Pooled struct {
	Impl   string             `json:"impl"` // "pooled"
	Config string             `json:"config"`
	Arch   string             `json:"arch"`
	Mode   string             `json:"mode"`
	GoMs   map[string]float64 `json:"go_ms"`   // by backend: median over its runs
	GoRuns map[string]int     `json:"go_runs"` // by backend
	// TorchMs is the median over every PyTorch record (every file: the same program
	// beside each Go build).
	TorchMs   float64            `json:"torch_ms"`
	TorchRuns int                `json:"torch_runs"`
	Ratio     map[string]float64 `json:"ratio"` // by backend: GoMs / TorchMs
	// RatioMin and RatioMax bound the ratios of Go to the PyTorch run in the same file
	// (the same bench run), by backend.
	RatioMin map[string]float64 `json:"ratio_min"`
	RatioMax map[string]float64 `json:"ratio_max"`
	// VsTrain is, for Go's eval and sample, the pooled speedup over the training step of the
	// same configuration and architecture, by backend: the median over runs of the training
	// step's ns per position divided by the median of this mode's ns per position (eval) or
	// per generated token (sample). VsTrainMin and VsTrainMax bound the speedups within
	// runs (the records' speedup_vs_train).
	VsTrain    map[string]float64 `json:"vs_train,omitempty"`
	VsTrainMin map[string]float64 `json:"vs_train_min,omitempty"`
	VsTrainMax map[string]float64 `json:"vs_train_max,omitempty"`
}

// poolKey identifies what is pooled.
type poolKey struct{ config, arch, mode string }

// settings are what must agree among the records pooled under one key: the dtype, the
// sequences per run and context, Go's sample window, and the threads.
func settings(r Measurement) string {
	return fmt.Sprintf("%s, batch %d, context %d, window %q, %d threads", r.Dtype, r.Batch, r.Context, r.Window, r.Threads)
}

// readRecords reads the measurements of one JSONL file, skipping comparisons and checks.
func readRecords(path string) ([]Measurement, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Measurement
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for line := 1; sc.Scan(); line++ {
		var r Measurement
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if r.Impl == "go" || r.Impl == "torch" {
			out = append(out, r)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no go or torch records", path)
	}
	return out, nil
}

// Pool pools the records of the files, in the order they first name each configuration,
// architecture and mode, and returns the Go backends in the order they first appear.
func Pool(paths []string) ([]Pooled, []string, error) {
	var order []poolKey
	goMs := map[poolKey]map[string][]float64{}
	torchMs := map[poolKey][]float64{}
	paired := map[poolKey]map[string][]float64{}
	perUnit := map[poolKey]map[string][]float64{}  // Go's ns per position or generated token
	speedups := map[poolKey]map[string][]float64{} // Go's eval and sample speedups over train
	seen := map[poolKey]map[string]string{}        // by key and impl: the settings and the file that set them
	var backends []string
	for _, path := range paths {
		recs, err := readRecords(path)
		if err != nil {
			return nil, nil, err
		}
		torchHere := map[poolKey]float64{}
		for _, r := range recs {
			if r.Impl == "torch" {
				torchHere[poolKey{r.Config, r.Arch, r.Mode}] = r.MsPerUnit()
			}
		}
		for _, r := range recs {
			k := poolKey{r.Config, r.Arch, r.Mode}
			if _, ok := goMs[k]; !ok {
				order = append(order, k)
				goMs[k], paired[k], seen[k] = map[string][]float64{}, map[string][]float64{}, map[string]string{}
				perUnit[k], speedups[k] = map[string][]float64{}, map[string][]float64{}
			}
			if prev, ok := seen[k][r.Impl]; !ok {
				seen[k][r.Impl] = settings(r) + "\x00" + path
			} else if set, file, _ := strings.Cut(prev, "\x00"); set != settings(r) {
				return nil, nil, fmt.Errorf("pool: %s %s %s of %s: %s in %s, %s in %s: pool runs of the same settings",
					k.config, k.arch, k.mode, r.Impl, set, file, settings(r), path)
			}
			if r.Impl == "torch" {
				torchMs[k] = append(torchMs[k], r.MsPerUnit())
				continue
			}
			if !slices.Contains(backends, r.Backend) {
				backends = append(backends, r.Backend)
			}
			goMs[k][r.Backend] = append(goMs[k][r.Backend], r.MsPerUnit())
			if ns := r.NsPerUnit(); ns > 0 {
				perUnit[k][r.Backend] = append(perUnit[k][r.Backend], ns)
			}
			if r.SpeedupVsTrain > 0 {
				speedups[k][r.Backend] = append(speedups[k][r.Backend], r.SpeedupVsTrain)
			}
			if t, ok := torchHere[k]; ok {
				paired[k][r.Backend] = append(paired[k][r.Backend], r.MsPerUnit()/t)
			}
		}
	}
	var out []Pooled
	for _, k := range order {
		p := Pooled{Impl: "pooled", Config: k.config, Arch: k.arch, Mode: k.mode,
			GoMs: map[string]float64{}, GoRuns: map[string]int{}, Ratio: map[string]float64{},
			RatioMin: map[string]float64{}, RatioMax: map[string]float64{}}
		if ts := torchMs[k]; len(ts) > 0 {
			p.TorchMs, p.TorchRuns = stats.Median(ts), len(ts)
		}
		for b, ms := range goMs[k] {
			p.GoMs[b], p.GoRuns[b] = stats.Median(ms), len(ms)
			if p.TorchRuns > 0 {
				p.Ratio[b] = p.GoMs[b] / p.TorchMs
			}
			if rs := paired[k][b]; len(rs) > 0 {
				p.RatioMin[b], p.RatioMax[b] = slices.Min(rs), slices.Max(rs)
			}
			train := perUnit[poolKey{k.config, k.arch, ModeTrain}][b]
			if here := perUnit[k][b]; k.mode != ModeTrain && len(train) > 0 && len(here) > 0 {
				if p.VsTrain == nil {
					p.VsTrain, p.VsTrainMin, p.VsTrainMax = map[string]float64{}, map[string]float64{}, map[string]float64{}
				}
				p.VsTrain[b] = stats.Median(train) / stats.Median(here)
				if sp := speedups[k][b]; len(sp) > 0 {
					p.VsTrainMin[b], p.VsTrainMax[b] = slices.Min(sp), slices.Max(sp)
				}
			}
		}
		out = append(out, p)
	}
	return out, backends, nil
}
