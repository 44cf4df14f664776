package main

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"lipformer/internal/plotting"
	"lipformer/model"
	"lipformer/ngram"
	"lipformer/train"
)

// runInfo is what a run directory tells about the run: its metrics and, when a summary
// or a checkpoint records them, its model config and training options.
type runInfo struct {
	dir       string
	metrics   train.Metrics
	cfg       *model.Config  // nil when unknown
	opt       *train.Options // nil when unknown
	nonFinite bool           // the summary says the run stopped at a non-finite value
	baselines []ngram.Result // the summary's n-gram baselines of the test split, if any
}

// loadRun reads the metrics of the run in dir and its settings, from summary.json if
// present, else from the metadata of its latest checkpoint, else none
// (train.RunDir.Settings).
func loadRun(dir string) (*runInfo, error) {
	d, err := train.OpenRun(dir)
	if err != nil {
		return nil, err
	}
	if err := d.SummaryError(); err != nil {
		return nil, err // a plot would lose the summary's baselines and divergence without a word
	}
	m, err := d.Metrics()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s is not a run directory (for the runs of a sweep, give its directory followed by /*): %w", dir, err)
	case err != nil:
		return nil, err
	}
	r := &runInfo{dir: dir, metrics: m}
	if sum := d.Summary(); sum != nil {
		r.nonFinite, r.baselines = sum.NonFinite, sum.Baselines
	}
	cfg, opt, ok, err := d.Settings()
	if err != nil {
		return nil, err
	}
	if ok {
		r.cfg, r.opt = &cfg, &opt
	}
	return r, nil
}

// tokensPerStep returns batch × context, or an error when the run's settings are unknown.
func (r *runInfo) tokensPerStep() (int, error) {
	if r.cfg == nil {
		return 0, fmt.Errorf("-x tokens: %s has neither %s nor %s to give its batch size and context", r.dir, train.SummaryFile, train.LatestFile)
	}
	return r.opt.Batch * r.cfg.Context, nil
}

// setting is one setting of a run, named as cmd/train's flag.
type setting struct{ key, value string }

// settings lists the run's settings in a fixed order, without the model settings its
// architecture does not use (model.Config.Uses), or nil when they are unknown.
func (r *runInfo) settings() []setting {
	if r.cfg == nil {
		return nil
	}
	c, o := r.cfg, r.opt
	hidden := c.Hidden
	if hidden == 0 {
		hidden = 4 * c.Width
	}
	num := func(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) } // 6 digits: 3e-3/10 is 0.0003 in a legend
	all := []setting{
		{"arch", c.Arch.String()}, {"layers", strconv.Itoa(c.Layers)}, {"norm", c.Norm.String()}, {"width", strconv.Itoa(c.Width)},
		{"heads", strconv.Itoa(c.Heads)}, {"hidden", strconv.Itoa(hidden)}, {"ctx", strconv.Itoa(c.Context)},
		{"dropout", num(c.Dropout)}, {"lip-c", num(c.LipC)}, {"dtype", c.Dtype.String()}, {"init-std", num(c.Std)},
		{"tie", strconv.FormatBool(c.Tie)}, {"balance-l2", strconv.FormatBool(c.BalanceL2)}, {"l2-bound", c.L2Bound.String()},
		{"l2-temp", strconv.FormatBool(c.L2Temp)}, {"l2-pos-bias", strconv.FormatBool(c.L2PosBias)}, {"mlp-gain", num(c.MLPGain)}, {"mlp-blocks", strconv.Itoa(c.MLPSubBlocks())}, {"mix", strconv.Itoa(c.Mix)},
		{"ball-radius", num(c.EffectiveBallRadius())}, {"embed-std", num(c.EffectiveEmbedStd())}, {"lip-k", lipK(c.LipK)},
		{"data", o.Data}, {"split", o.Split}, {"batch", strconv.Itoa(o.Batch)}, {"steps", strconv.Itoa(o.Steps)},
		{"lr", num(o.LR)}, {"min-lr", num(o.MinLR)}, {"warmup", strconv.Itoa(o.Warmup)}, {"schedule", o.Schedule},
		{"beta1", num(o.Beta1)}, {"beta2", num(o.Beta2)}, {"weight-decay", num(o.WeightDecay)}, {"muon", num(o.Muon)}, {"clip", num(o.Clip)},
		{"eval-every", strconv.Itoa(o.EvalEvery)}, {"eval-bytes", strconv.Itoa(o.EvalBytes)},
		{"seed", strconv.FormatUint(o.Seed, 10)},
	}
	used := all[:0]
	for _, s := range all {
		if c.Uses(strings.ReplaceAll(s.key, "-", "_")) {
			used = append(used, s)
		}
	}
	return used
}

// baselineRefs returns the n-gram baselines of the first run whose summary has them, as
// reference lines labelled with the order and the bpc.
func baselineRefs(runs []*runInfo) ([]plotting.Ref, error) {
	for _, r := range runs {
		if len(r.baselines) == 0 {
			continue
		}
		refs := make([]plotting.Ref, len(r.baselines))
		for i, b := range r.baselines {
			refs[i] = plotting.Ref{Label: fmt.Sprintf("%s (test) %.3f", ngram.Name(b.Order), b.BPC), Y: b.BPC}
		}
		return refs, nil
	}
	return nil, errors.New("-baselines: no run's summary.json has n-gram baselines")
}

// lipK names a whole-model bound for a legend: its value, or none.
func lipK(k float64) string {
	if k == 0 {
		return "none"
	}
	return strconv.FormatFloat(k, 'g', 6, 64)
}
