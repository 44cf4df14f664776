// Command expressive measures the smallest head width d at which a self-attention module
// with fixed parameters realises random k-sparse attention targets of length L at
// precision eps (docs/math.md, "Expressive power of attention matrices", after Likhosherstov, Choromanski and Weller 2021), for
// the constructive method jl and the gradient-descent method gd, and fits d against log L
// and against L.
//
// Per (method, k, L) it searches d by doubling from 1 (gd: from -gd-d-start) and then
// bisecting, or for gd with -gd-search walk by steps of 1 from -gd-d-start (it assumes
// that success is monotone in d), for the smallest d at which at
// least a fraction 1 - delta of -trials random targets succeed. The human table goes to
// stdout, or to stderr with -json, which writes one JSON object per line to stdout
// instead. With -in it runs nothing and reports, fits and plots the cells of earlier
// -json outputs, so that an experiment can be run in parts.
//
// jl chooses its margin (Delta = log(1/eps) + margin) per target by default (-margin
// target), or one per cell and d (-margin cell), or takes a fixed one (-margin 0.5).
//
//	expressive -L 16,64,256,1024 -k 1,2,4 -method jl -json > runs/jl.jsonl
//	expressive -L 16,32,64 -k 2 -method gd -json > runs/gd.jsonl
//	expressive -in runs/jl.jsonl,runs/gd.jsonl -json -plot runs/d.png > runs/all.jsonl
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"lipformer/expressive"
	"lipformer/internal/cli"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "expressive:", err)
		os.Exit(1)
	}
}

// config is the parsed command line: the experiment, or earlier outputs to read, and what
// to do with the cells.
type config struct {
	exp      expressive.Experiment
	json     bool
	csvPath  string
	plotPath string
	inPaths  []string
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("expressive", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &config{}
	Ls := fs.String("L", "16,32,64,128,256,512,1024", "comma-separated sequence lengths L")
	ks := fs.String("k", "1,2,4", "comma-separated sparsities k (nonzeros per row and column)")
	methods := fs.String("method", "jl", "comma-separated methods: jl (constructive), gd (gradient descent)")
	fs.Float64Var(&c.exp.Eps, "eps", 0.1, "precision: ratio error <= log(1+eps) and leak <= eps")
	fs.Float64Var(&c.exp.Delta, "delta", 0.1, "a d succeeds when the success rate is >= 1-delta")
	fs.IntVar(&c.exp.Trials, "trials", 20, "random targets per (method, L, k, d)")
	fs.IntVar(&c.exp.JLSearch.Max, "d-max", 1<<20, "largest head width d tried by jl")
	fs.Float64Var(&c.exp.JLSearch.RelTol, "rel-tol", 0, "jl bisection stops at hi-lo <= rel-tol*lo (0: exact)")
	fs.Float64Var(&c.exp.Range, "range", 10, "target values are log-uniform on [1, range]")
	margin := fs.String("margin", "target", "jl margin in nats, Delta = log(1/eps) + margin: target (each target's input uses a margin that realises it, if any: the smallest d over all margins), cell (one margin per cell and d, the one realising the most targets), or a fixed number >= 0 (0.5 before the margin was optimised)")
	fs.IntVar(&c.exp.GD.MaxIter, "gd-iters", expressive.DefaultGDOptions(0.1).MaxIter, "gd: Adam steps per target")
	fs.Float64Var(&c.exp.GD.LearningRate, "gd-lr", expressive.DefaultGDOptions(0.1).LearningRate, "gd: Adam learning rate")
	fs.IntVar(&c.exp.GDLMax, "gd-L-max", 256, "gd runs only for L <= gd-L-max")
	fs.IntVar(&c.exp.GDSearch.Start, "gd-d-start", 1, "first head width d tried by gd (the search doubles from it, then bisects below the first pass)")
	fs.IntVar(&c.exp.GDSearch.Max, "gd-d-max", 1024, "largest head width d tried by gd")
	fs.Float64Var(&c.exp.GDSearch.RelTol, "gd-rel-tol", 0.1, "gd bisection stops at hi-lo <= gd-rel-tol*lo")
	gdSearch := fs.String("gd-search", "double", "gd search over d: double (double from gd-d-start, then bisect) or walk (steps of 1 from gd-d-start: up while failing, down while passing)")
	fs.BoolVar(&c.exp.GDFull, "gd-full", false, "gd: run every trial at each d instead of stopping once pass or fail is decided")
	fs.Uint64Var(&c.exp.Seed, "seed", 1, "random seed")
	fs.BoolVar(&c.json, "json", false, "write one JSON object per line to stdout (human table to stderr)")
	fs.StringVar(&c.csvPath, "csv", "", "write one CSV row per (method, k, L) to this file")
	fs.StringVar(&c.plotPath, "plot", "", "plot smallest d against L to this .png or .svg file")
	in := fs.String("in", "", "comma-separated -json outputs of earlier runs: report, fit and plot their cells instead of running (the run flags are then ignored)")
	if err := cli.Parse(fs, args); err != nil {
		return nil, err
	}
	c.exp.JLSearch.Start = 1
	switch *gdSearch {
	case "double":
	case "walk":
		c.exp.GDSearch.Walk = true
	default:
		return nil, fmt.Errorf("-gd-search: %q is not double or walk", *gdSearch)
	}
	if err := c.parseMargin(*margin); err != nil {
		return nil, err
	}
	if *in != "" {
		c.inPaths = strings.Split(*in, ",")
	}
	var err error
	if c.exp.Ls, err = cli.Ints("-L", *Ls); err != nil {
		return nil, err
	}
	if c.exp.Ks, err = cli.Ints("-k", *ks); err != nil {
		return nil, err
	}
	for _, m := range strings.Split(*methods, ",") {
		m = strings.TrimSpace(m)
		if m != expressive.MethodJL && m != expressive.MethodGD {
			return nil, fmt.Errorf("-method: %q is not jl or gd", m)
		}
		c.exp.Methods = append(c.exp.Methods, m)
	}
	return c, c.check()
}

// parseMargin sets the jl margin from -margin: a mode name or a fixed number.
func (c *config) parseMargin(s string) error {
	if mode, err := expressive.ParseMarginMode(s); err == nil && mode != expressive.MarginFixed {
		c.exp.Margins = mode
		return nil
	}
	m, err := strconv.ParseFloat(s, 64)
	if err != nil || !(m >= 0) || math.IsInf(m, 1) {
		return fmt.Errorf("-margin = %q, want target, cell or a finite number >= 0", s)
	}
	c.exp.Margins, c.exp.Margin = expressive.MarginFixed, m
	return nil
}

// check validates the numeric flags, naming the flag at fault.
func (c *config) check() error {
	e := &c.exp
	switch {
	case !(e.Eps > 0 && e.Eps < 1):
		return fmt.Errorf("-eps = %v, want 0 < eps < 1", e.Eps)
	case !(e.Delta >= 0 && e.Delta < 1):
		return fmt.Errorf("-delta = %v, want 0 <= delta < 1", e.Delta)
	case e.Trials < 1:
		return fmt.Errorf("-trials = %d, want >= 1", e.Trials)
	case e.JLSearch.Max < 1:
		return fmt.Errorf("-d-max = %d, want >= 1", e.JLSearch.Max)
	case e.GDSearch.Max < 1:
		return fmt.Errorf("-gd-d-max = %d, want >= 1", e.GDSearch.Max)
	case e.GDSearch.Start < 1 || e.GDSearch.Start > e.GDSearch.Max:
		return fmt.Errorf("-gd-d-start = %d, want 1 <= gd-d-start <= gd-d-max = %d", e.GDSearch.Start, e.GDSearch.Max)
	case !(e.JLSearch.RelTol >= 0) || math.IsInf(e.JLSearch.RelTol, 1):
		return fmt.Errorf("-rel-tol = %v, want finite and >= 0", e.JLSearch.RelTol)
	case !(e.GDSearch.RelTol >= 0) || math.IsInf(e.GDSearch.RelTol, 1):
		return fmt.Errorf("-gd-rel-tol = %v, want finite and >= 0", e.GDSearch.RelTol)
	case !(e.Range >= 1) || math.IsInf(e.Range, 1):
		return fmt.Errorf("-range = %v, want finite and >= 1", e.Range)
	case e.GD.MaxIter < 1:
		return fmt.Errorf("-gd-iters = %d, want >= 1", e.GD.MaxIter)
	case !(e.GD.LearningRate > 0) || math.IsInf(e.GD.LearningRate, 1):
		return fmt.Errorf("-gd-lr = %v, want finite and > 0", e.GD.LearningRate)
	}
	if c.plotPath != "" {
		if ext := strings.ToLower(filepath.Ext(c.plotPath)); ext != ".png" && ext != ".svg" {
			return fmt.Errorf("-plot %q: want a .png or .svg file", c.plotPath)
		}
	}
	return nil
}
