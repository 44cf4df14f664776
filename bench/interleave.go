package bench

import (
	"fmt"
	"runtime"
	"slices"
	"time"

	"lipformer/internal/stats"
)

// MeasureInterleaved times one mode of several jobs in alternation, in one process: each
// job's workload is built and warmed up, then in every round each job times one run, the
// order of the jobs rotated from round to round. A virtual machine's speed drifts by a
// third within minutes; jobs timed minutes apart (Measure, one after the other) measure
// the drift as much as the jobs, jobs timed in the same round do not. It returns a
// Measurement per job, as Measure's but for the live heap (of all the jobs' workloads
// together) and with the paired ratios to the first job: the quartiles over the rounds of
// the job's run time over the first job's in the same round, named by the first job's
// architecture, or for a saved model (CheckpointJob) by its label.
func MeasureInterleaved(jobs []Job, mode string) ([]Measurement, error) {
	ws := make([]*Workload, len(jobs))
	defer func() {
		for _, w := range ws {
			if w != nil {
				w.Close()
			}
		}
	}()
	for k, j := range jobs {
		w, err := j.Workload(mode)
		if err != nil {
			return nil, j.errorf(mode, err)
		}
		ws[k] = w
	}
	runs := make([]func(int) error, len(ws))
	for k, w := range ws {
		runs[k] = w.Run
	}
	tms, failed, err := timeInterleaved(runs, jobs[0].Set.Warmup, jobs[0].Set.Steps)
	if err != nil {
		return nil, jobs[failed].errorf(mode, err)
	}
	rs := make([]Measurement, len(jobs))
	for k, j := range jobs {
		r, err := j.measurement(mode, ws[k], tms[k])
		if err != nil {
			return nil, err
		}
		r.Interleaved = true
		if k > 0 {
			r.PairedWith = rs[0].Arch
			if jobs[0].Checkpoint != "" {
				r.PairedWith = rs[0].Config
			}
			r.PairedQ1, r.PairedMedian, r.PairedQ3 = quartiles(pairedRatios(tms[k].durs, tms[0].durs))
		}
		rs[k] = r
	}
	return rs, nil
}

// timeInterleaved calls each of runs warmup times, then times steps rounds of a call of
// each, the first of round i being runs[i % len(runs)] and the others following in order,
// with the allocations of each call counted to its run and the live heap (settledHeap)
// before and after the rounds given to all. A run gets the call's index from 0. On a
// call's error it returns the index of its run.
func timeInterleaved(runs []func(i int) error, warmup, steps int) ([]timing, int, error) {
	if steps < 1 {
		return nil, 0, fmt.Errorf("%d timed runs, want >= 1", steps)
	}
	for k, run := range runs {
		for i := range warmup {
			if err := run(i); err != nil {
				return nil, k, err
			}
		}
	}
	tms := make([]timing, len(runs))
	for k := range tms {
		tms[k].durs = make([]time.Duration, steps)
	}
	heapStart := settledHeap()
	var before, after runtime.MemStats
	for i := range steps {
		for n := range runs {
			k := (n + i) % len(runs)
			runtime.ReadMemStats(&before)
			t0 := time.Now()
			if err := runs[k](warmup + i); err != nil {
				return nil, k, err
			}
			tms[k].durs[i] = time.Since(t0)
			runtime.ReadMemStats(&after)
			tms[k].bytes += float64(after.TotalAlloc-before.TotalAlloc) / float64(steps)
			tms[k].allocs += float64(after.Mallocs-before.Mallocs) / float64(steps)
		}
	}
	heapEnd := settledHeap()
	for k := range tms {
		tms[k].heapStart, tms[k].heapEnd = heapStart, heapEnd
	}
	return tms, 0, nil
}

// pairedRatios are a[i] / b[i].
func pairedRatios(a, b []time.Duration) []float64 {
	r := make([]float64, len(a))
	for i := range a {
		r[i] = float64(a[i]) / float64(b[i])
	}
	return r
}

// quartiles are the first quartile, the median and the third quartile of xs (not empty),
// each the median of its half (the middle value left out of both halves for an odd
// count).
func quartiles(xs []float64) (q1, med, q3 float64) {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n == 1 {
		return s[0], s[0], s[0]
	}
	return stats.Median(s[:n/2]), stats.Median(s), stats.Median(s[(n+1)/2:])
}
