package model

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/layers"
	"lipformer/ops"
)

// Program is the model compiled for batches of B sequences of T = context tokens: write the
// token ids into Inputs and the next-token targets into Targets (row-major (B, T); a
// negative target is not scored), then Run. Programs share the model's weights.
type Program struct {
	Graph   *layers.Graph
	Inputs  []int // (B*T) token ids
	Targets []int // (B*T) next-token ids, or -1
	mode    Mode
	ran     error // why Loss and Logits have no value: errNoRun, a failed run, or nil
	loss    *G.Node
	logits  *G.Node
	hits    *G.Node // evaluation programs: the rows whose top logit is the target (ops.Correct)
	params  []*layers.Param
	grads   []*G.Node // gradient of the loss per parameter, training programs only
	vm      G.VM
	lossVal *G.Value // a separate allocation: see NewProgram
	logVal  G.Value
	hitsVal G.Value
	// rows are the token table's rows that a model with n-byte tokens reads (cfg.TokenRow of
	// Inputs), written by Run; nil otherwise, when the look-up reads Inputs.
	rows []int
	cfg  Config
}

// Mode selects what a program computes.
type Mode int

const (
	// Train computes the loss and its gradients, with dropout.
	Train Mode = iota
	// Eval computes the loss and the top-1 hits (Hits), without dropout.
	Eval
	// Sample computes the logits only, without dropout.
	Sample
)

// NewProgram compiles the model for batches of the given size.
func (m *Model) NewProgram(mode Mode, batch int) (*Program, error) {
	g, err := layers.NewGraph(m.Cfg.Dtype.Tensor(), batch, m.Cfg.Context, mode == Train)
	if err != nil {
		return nil, err
	}
	n := batch * m.Cfg.Context
	p := &Program{Graph: g, Inputs: make([]int, n), Targets: make([]int, n), mode: mode, ran: errNoRun, lossVal: new(G.Value)}
	rows := p.Inputs // (B*T) rows of the token table
	if m.Cfg.TokenBytes > 1 {
		p.cfg, p.rows = m.Cfg, make([]int, n)
		rows = p.rows
	}
	ids := G.NodeFromAny(g.G, tensor.New(tensor.WithShape(n), tensor.WithBacking(rows)), G.WithName("ids"))
	if p.logits, err = m.logits(g, ids); err != nil {
		return nil, err
	}
	if mode == Sample {
		return p, p.compile(g, p.logits)
	}
	targets := G.NodeFromAny(g.G, tensor.New(tensor.WithShape(n), tensor.WithBacking(p.Targets)), G.WithName("targets"))
	if p.loss, err = ops.CrossEntropy(p.logits, targets); err != nil {
		return nil, err
	}
	if mode == Train {
		// docs/gorgonia.md: registers are reused after RunAll. The read op must not point into p:
		// p holds the tape machine, which has a finalizer, and a cycle through an object
		// with a finalizer is never collected (every closed training program leaked).
		G.Read(p.loss, p.lossVal)
		p.params = m.Params()
		if used := g.Params(); !slices.Equal(used, p.params) {
			return nil, fmt.Errorf("model: the training graph uses %d parameters (%s), the model lists %d (%s)",
				len(used), paramNames(used), len(p.params), paramNames(p.params))
		}
		nodes := make(G.Nodes, len(p.params))
		for i, q := range p.params {
			nodes[i] = g.Node(q)
		}
		if p.grads, err = G.Grad(p.loss, nodes...); err != nil {
			return nil, fmt.Errorf("model: gradients: %w", err)
		}
	}
	if mode == Eval {
		if p.hits, err = ops.Correct(p.logits, targets); err != nil {
			return nil, err
		}
		return p, p.compile(g, p.loss, p.hits)
	}
	return p, p.compile(g, p.loss)
}

// compile makes the tape machine; forward-only programs are pruned to what outs need.
func (p *Program) compile(g *layers.Graph, outs ...*G.Node) error {
	if p.grads != nil {
		p.vm = G.NewTapeMachine(g.G)
		return nil
	}
	prog, locs, err := G.CompileFunction(g.G, g.G.Inputs(), G.Nodes(outs))
	if err != nil {
		return fmt.Errorf("model: compile: %w", err)
	}
	p.vm = G.NewTapeMachine(g.G, G.WithPrecompiled(prog, locs))
	return nil
}

// errNoRun is the error of Loss and Logits before the first Run.
var errNoRun = errors.New("model: no run yet (Loss and Logits are those of the last Run)")

// String names the mode as the programs' errors do.
func (m Mode) String() string {
	switch m {
	case Train:
		return "training"
	case Eval:
		return "evaluation"
	case Sample:
		return "sampling"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// program names a program of the mode with its article: "an evaluation program".
func (m Mode) program() string {
	if m == Eval {
		return "an evaluation program"
	}
	return "a " + m.String() + " program"
}

// Run executes the program once. Until the next Run succeeds, Loss and Logits return
// the error of one that failed.
func (p *Program) Run() error {
	defer p.vm.Reset()
	if p.rows != nil {
		if err := p.tokenRows(); err != nil {
			p.ran = fmt.Errorf("model: the last run of %s failed: %w", p.mode.program(), err)
			return err
		}
	}
	if err := p.vm.RunAll(); err != nil {
		err = vmCause(err)
		p.ran = fmt.Errorf("model: the last run of %s failed: %w", p.mode.program(), err)
		return err
	}
	switch {
	case p.grads != nil: // the loss was read by a Read node
	case p.loss != nil:
		*p.lossVal = p.loss.Value()
		if p.hits != nil {
			p.hitsVal = p.hits.Value()
		}
	default:
		p.logVal = p.logits.Value()
	}
	p.ran = nil
	return nil
}

// tokenRows writes the rows of a model with n-byte tokens: each position's row depends on
// its token and the n - 1 before it in its window. A token outside the vocabulary is an
// error, as the look-up of a byte model makes it, since a row of it could be another's.
func (p *Program) tokenRows() error {
	T, V := p.cfg.Context, p.cfg.Vocab
	for i, id := range p.Inputs {
		if id < 0 || id >= V {
			return fmt.Errorf("token id %d at row %d, want 0..%d", id, i, V-1)
		}
	}
	for i := range p.rows {
		w := i / T * T
		p.rows[i] = p.cfg.TokenRow(p.Inputs[w:w+T], i-w)
	}
	return nil
}

// Loss is the mean next-token loss in nats of the last run. It is an error before the
// first run, after a failed one, and for a sampling program, which computes no loss.
func (p *Program) Loss() (float64, error) {
	if p.loss == nil {
		return 0, fmt.Errorf("model: %s has no loss", p.mode.program())
	}
	if p.ran != nil {
		return 0, p.ran
	}
	switch v := (*p.lossVal).Data().(type) {
	case float32:
		return float64(v), nil
	case float64:
		return v, nil
	default:
		return 0, fmt.Errorf("model: the loss holds %T, want float32 or float64", v)
	}
}

// Hits is the number of scored rows of the last run of an evaluation program whose
// largest logit is at the target: the top-1 hits of next-byte prediction. It is an error
// before the first run, after a failed one, and for another program.
func (p *Program) Hits() (int, error) {
	if p.hits == nil {
		return 0, fmt.Errorf("model: %s counts no hits (an evaluation program does)", p.mode.program())
	}
	if p.ran != nil {
		return 0, p.ran
	}
	switch v := p.hitsVal.Data().(type) {
	case float32:
		return int(v), nil
	case float64:
		return int(v), nil
	default:
		return 0, fmt.Errorf("model: the hits hold %T, want float32 or float64", v)
	}
}

// Logits returns row r (0 <= r < B*T) of the logits (V) of the last run, as float64. It
// is an error before the first run, after a failed one, and for a training or evaluation
// program, which computes only the loss.
func (p *Program) Logits(r int) ([]float64, error) {
	if p.mode != Sample {
		return nil, fmt.Errorf("model: %s has no logits (a sampling program has)", p.mode.program())
	}
	if p.ran != nil {
		return nil, p.ran
	}
	d, ok := p.logVal.(*tensor.Dense)
	if !ok || d.Dims() != 2 {
		return nil, fmt.Errorf("model: the logits are %T, want a (B*T, V) matrix", p.logVal)
	}
	rows, v := d.Shape()[0], d.Shape()[1]
	if r < 0 || r >= rows {
		return nil, fmt.Errorf("model: logits row %d out of range [0, %d)", r, rows)
	}
	out := make([]float64, v)
	switch x := d.Data().(type) {
	case []float32:
		for i := range out {
			out[i] = float64(x[r*v+i])
		}
	case []float64:
		copy(out, x[r*v:(r+1)*v])
	default:
		return nil, fmt.Errorf("model: the logits hold %T, want []float32 or []float64", x)
	}
	return out, nil
}

// Params returns the parameters that Grads refers to, in order.
func (p *Program) Params() []*layers.Param { return p.params }

// Grad returns the gradient tensor of parameter i after a run of a training program.
func (p *Program) Grad(i int) (*tensor.Dense, error) {
	if p.mode != Train {
		return nil, fmt.Errorf("model: %s has no gradients", p.mode.program())
	}
	if i < 0 || i >= len(p.grads) {
		return nil, fmt.Errorf("model: gradient %d out of range [0, %d)", i, len(p.grads))
	}
	if p.ran != nil {
		return nil, p.ran
	}
	d, ok := p.grads[i].Value().(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("model: no gradient for %s", p.params[i].Name)
	}
	return d, nil
}

// Resample redraws the dropout masks for a training step.
func (p *Program) Resample(seed uint64, step int) { p.Graph.Resample(seed, step) }

// Close releases the program's machine.
func (p *Program) Close() error { return p.vm.Close() }

// paramNames joins the parameters' names with commas.
func paramNames(ps []*layers.Param) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// vmCause is err with its cause reachable by errors.Is: Gorgonia's VM error hides the op's
// error behind an Err method, not Unwrap. The message is the VM's, which holds the cause's.
func vmCause(err error) error {
	if c, ok := err.(interface{ Err() error }); ok && c.Err() != nil {
		return vmError{err, c.Err()}
	}
	return err
}

// vmError is a VM error whose cause Unwrap returns.
type vmError struct{ vm, cause error }

// Error is the VM's message.
func (e vmError) Error() string { return e.vm.Error() }

// Unwrap is the op's error.
func (e vmError) Unwrap() error { return e.cause }
