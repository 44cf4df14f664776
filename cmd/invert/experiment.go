package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"lipformer/data"
	"lipformer/flow"
	"lipformer/internal/cli"
	"lipformer/internal/jsonfloat"
	"lipformer/model"
	"lipformer/train"
)

// Kinds of input.
const (
	kindData        = "data"
	kindAdversarial = "adversarial"
	kindRandom      = "random"
)

// experiment is a loaded checkpoint, compiled as a stack, with the data windows to invert.
type experiment struct {
	cfg    *config
	path   string
	step   int
	model  *model.Model // float64
	stack  *flow.Stack
	ids    []int // (B*T) token ids of the data windows
	corpus string
	opt    flow.Options
}

// newExperiment loads the checkpoint and its corpus, converts the model to float64, runs the
// power iterations and compiles the stack.
func newExperiment(ctx context.Context, c *config, log *slog.Logger) (*experiment, error) {
	path, err := cli.CheckpointPath(c.ckpt)
	if err != nil {
		return nil, err
	}
	m, ck, err := model.Load(path)
	if err != nil {
		return nil, err
	}
	if len(m.Inv) == 0 {
		return nil, fmt.Errorf("-ckpt %s: architecture %s is not invertible (want invertible-l2 or invertible-dp)", path, m.Cfg.Arch)
	}
	ids, corpus, err := dataWindows(ctx, c, path, ck, m.Cfg.Context, log)
	if err != nil {
		return nil, err
	}
	if m, err = m.WithDtype("float64"); err != nil {
		return nil, err
	}
	m.PowerIterate(c.powerIters)
	st, err := flow.NewStack(m, c.batch)
	if err != nil {
		return nil, err
	}
	step, _ := ck.MetaInt(train.MetaStep)
	return &experiment{cfg: c, path: path, step: step, model: m, stack: st, ids: ids, corpus: corpus,
		opt: flow.Options{Tol: c.tol, MaxIter: c.maxIter, Log: log}}, nil
}

// dataWindows loads the corpus of the checkpoint ck read from path (or -data) and returns
// the token ids of the first B evaluation windows of the split, and the corpus's name.
func dataWindows(ctx context.Context, c *config, path string, ck *model.Checkpoint, context int, log *slog.Logger) ([]int, string, error) {
	opt, err := train.TrainOptions(ck)
	if err != nil {
		return nil, "", err
	}
	var corpus *data.Corpus
	if c.data != "" {
		corpus, err = cli.LoadCorpus(ctx, c.data, opt.Split, c.dataDir, log)
	} else {
		corpus, err = cli.CheckpointCorpus(ctx, opt.Data, opt.Split, path, c.dataDir, log)
	}
	if err != nil {
		return nil, "", err
	}
	if string(corpus.Vocab.Bytes()) != string(ck.Vocab) {
		return nil, "", fmt.Errorf("corpus %s has another vocabulary than the checkpoint (%d and %d bytes)", corpus.Name, corpus.Vocab.Size(), len(ck.Vocab))
	}
	text := corpus.Valid
	if c.split == "test" {
		text = corpus.Test
	}
	tokens, err := corpus.Vocab.EncodeCompact(text)
	if err != nil {
		return nil, "", fmt.Errorf("%s split: %w", c.split, err)
	}
	w, err := data.NewEvalWindows(tokens, context, c.batch)
	if err != nil {
		return nil, "", fmt.Errorf("%s split: %w", c.split, err)
	}
	ids, targets := make([]int, c.batch*context), make([]int, c.batch*context)
	if _, err := w.Batch(0, ids, targets); err != nil {
		return nil, "", err
	}
	return ids, corpus.Name, nil
}

// record is the outcome of one sub-block's inversion on one input.
type record struct {
	Arch       string          `json:"arch"`
	Block      string          `json:"block"`
	Norm       string          `json:"norm"`
	Input      string          `json:"input"`            // data, adversarial or random
	Spread     float64         `json:"spread,omitempty"` // of adversarial and random inputs
	Stack      bool            `json:"stack"`            // inverted as part of the whole stack (data)
	InputNorm  jsonfloat.Float `json:"input_norm"`       // of the true input, in the norm
	Lipschitz  jsonfloat.Float `json:"lipschitz"`        // g's constant in the norm
	Certified  bool            `json:"certified"`        // whether it is a certified bound
	Converged  bool            `json:"converged"`
	Iterations int             `json:"iterations"`
	Step       jsonfloat.Float `json:"final_step"`
	Error      jsonfloat.Float `json:"reconstruction_error"`
	Rate       jsonfloat.Float `json:"contraction_rate"` // largest ratio of successive steps; NaN if unmeasured
	Failed     bool            `json:"failed"`           // not converged, or reconstruction error above -max-error
	Errors     []float64       `json:"-"`                // reconstruction error per iteration, for the plot
}

// run inverts the data windows as a stack, then every sub-block on the adversarial and
// random inputs at every spread.
func (e *experiment) run() ([]record, error) {
	x, err := flow.Embed(e.model, e.ids)
	if err != nil {
		return nil, err
	}
	states, err := e.stack.Forward(x)
	if err != nil {
		return nil, err
	}
	_, results, err := e.stack.Invert(states[len(states)-1], states, e.opt)
	if err != nil && !errors.Is(err, flow.ErrNotConverged) {
		return nil, err
	}
	var records []record
	for i, r := range results {
		records = append(records, e.record(r, states[i], kindData, 0, true))
	}
	b, t, d := e.cfg.batch, e.model.Cfg.Context, e.model.Cfg.Width
	for _, kind := range []string{kindAdversarial, kindRandom} {
		for _, spread := range e.cfg.spreads {
			x := flow.Random(b, t, d, spread, e.cfg.seed)
			if kind == kindAdversarial {
				x = flow.Adversarial(b, t, d, spread, e.cfg.seed)
			}
			for _, s := range e.stack.Subs {
				y, err := s.Forward(x)
				if err != nil {
					return nil, err
				}
				_, res, err := s.Invert(y, x, e.opt)
				if err != nil && !errors.Is(err, flow.ErrNotConverged) {
					return nil, err
				}
				records = append(records, e.record(res, x, kind, spread, false))
			}
		}
	}
	return records, nil
}

// record turns a flow result for the true input x into a record.
func (e *experiment) record(r flow.Result, x []float64, kind string, spread float64, stack bool) record {
	return record{Arch: e.model.Cfg.Arch, Block: r.Block, Norm: r.Norm.String(), Input: kind, Spread: spread, Stack: stack,
		InputNorm: jsonfloat.Float(r.Norm.Of(x, e.model.Cfg.Width)),
		Lipschitz: jsonfloat.Float(r.Lipschitz), Certified: r.Certified, Converged: r.Converged, Iterations: r.Iterations,
		Step: jsonfloat.Float(r.Step), Error: jsonfloat.Float(r.Error), Rate: jsonfloat.Float(r.Rate),
		Failed: !r.Converged || !(r.Error <= e.cfg.maxError), Errors: r.Errors}
}
