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

// config is the parsed command line.
type config struct {
	Ls, ks   []int
	methods  []string
	eps      float64
	delta    float64
	trials   int
	dMax     int
	relTol   float64
	ratio    float64
	margin   float64
	gd       expressive.GDOptions
	gdLMax   int
	gdDStart int
	gdDMax   int
	gdRelTol float64
	gdWalk   bool
	gdFull   bool
	seed     uint64
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
	fs.Float64Var(&c.eps, "eps", 0.1, "precision: ratio error <= log(1+eps) and leak <= eps")
	fs.Float64Var(&c.delta, "delta", 0.1, "a d succeeds when the success rate is >= 1-delta")
	fs.IntVar(&c.trials, "trials", 20, "random targets per (method, L, k, d)")
	fs.IntVar(&c.dMax, "d-max", 1<<20, "largest head width d tried by jl")
	fs.Float64Var(&c.relTol, "rel-tol", 0, "jl bisection stops at hi-lo <= rel-tol*lo (0: exact)")
	fs.Float64Var(&c.ratio, "range", 10, "target values are log-uniform on [1, range]")
	fs.Float64Var(&c.margin, "margin", expressive.DefaultMargin, "jl margin in nats: Delta = log(1/eps) + margin")
	fs.IntVar(&c.gd.MaxIter, "gd-iters", expressive.DefaultGDOptions(0.1).MaxIter, "gd: Adam steps per target")
	fs.Float64Var(&c.gd.LearningRate, "gd-lr", expressive.DefaultGDOptions(0.1).LearningRate, "gd: Adam learning rate")
	fs.IntVar(&c.gdLMax, "gd-L-max", 256, "gd runs only for L <= gd-L-max")
	fs.IntVar(&c.gdDStart, "gd-d-start", 1, "first head width d tried by gd (the search doubles from it, then bisects below the first pass)")
	fs.IntVar(&c.gdDMax, "gd-d-max", 1024, "largest head width d tried by gd")
	fs.Float64Var(&c.gdRelTol, "gd-rel-tol", 0.1, "gd bisection stops at hi-lo <= gd-rel-tol*lo")
	gdSearch := fs.String("gd-search", "double", "gd search over d: double (double from gd-d-start, then bisect) or walk (steps of 1 from gd-d-start: up while failing, down while passing)")
	fs.BoolVar(&c.gdFull, "gd-full", false, "gd: run every trial at each d instead of stopping once pass or fail is decided")
	seed := fs.Uint64("seed", 1, "random seed")
	fs.BoolVar(&c.json, "json", false, "write one JSON object per line to stdout (human table to stderr)")
	fs.StringVar(&c.csvPath, "csv", "", "write one CSV row per (method, k, L) to this file")
	fs.StringVar(&c.plotPath, "plot", "", "plot smallest d against L to this .png or .svg file")
	in := fs.String("in", "", "comma-separated -json outputs of earlier runs: report, fit and plot their cells instead of running (the run flags are then ignored)")
	if err := cli.Parse(fs, args); err != nil {
		return nil, err
	}
	c.seed = *seed
	switch *gdSearch {
	case "double":
	case "walk":
		c.gdWalk = true
	default:
		return nil, fmt.Errorf("-gd-search: %q is not double or walk", *gdSearch)
	}
	if *in != "" {
		c.inPaths = strings.Split(*in, ",")
	}
	var err error
	if c.Ls, err = cli.Ints("-L", *Ls); err != nil {
		return nil, err
	}
	if c.ks, err = cli.Ints("-k", *ks); err != nil {
		return nil, err
	}
	for _, m := range strings.Split(*methods, ",") {
		m = strings.TrimSpace(m)
		if m != expressive.MethodJL && m != expressive.MethodGD {
			return nil, fmt.Errorf("-method: %q is not jl or gd", m)
		}
		c.methods = append(c.methods, m)
	}
	return c, c.check()
}

// check validates the numeric flags, naming the flag at fault.
func (c *config) check() error {
	switch {
	case !(c.eps > 0 && c.eps < 1):
		return fmt.Errorf("-eps = %v, want 0 < eps < 1", c.eps)
	case !(c.delta >= 0 && c.delta < 1):
		return fmt.Errorf("-delta = %v, want 0 <= delta < 1", c.delta)
	case c.trials < 1:
		return fmt.Errorf("-trials = %d, want >= 1", c.trials)
	case c.dMax < 1:
		return fmt.Errorf("-d-max = %d, want >= 1", c.dMax)
	case c.gdDMax < 1:
		return fmt.Errorf("-gd-d-max = %d, want >= 1", c.gdDMax)
	case c.gdDStart < 1 || c.gdDStart > c.gdDMax:
		return fmt.Errorf("-gd-d-start = %d, want 1 <= gd-d-start <= gd-d-max = %d", c.gdDStart, c.gdDMax)
	case !(c.relTol >= 0) || math.IsInf(c.relTol, 1):
		return fmt.Errorf("-rel-tol = %v, want finite and >= 0", c.relTol)
	case !(c.gdRelTol >= 0) || math.IsInf(c.gdRelTol, 1):
		return fmt.Errorf("-gd-rel-tol = %v, want finite and >= 0", c.gdRelTol)
	case !(c.ratio >= 1) || math.IsInf(c.ratio, 1):
		return fmt.Errorf("-range = %v, want finite and >= 1", c.ratio)
	case !(c.margin >= 0) || math.IsInf(c.margin, 1):
		return fmt.Errorf("-margin = %v, want finite and >= 0", c.margin)
	case c.gd.MaxIter < 1:
		return fmt.Errorf("-gd-iters = %d, want >= 1", c.gd.MaxIter)
	case !(c.gd.LearningRate > 0) || math.IsInf(c.gd.LearningRate, 1):
		return fmt.Errorf("-gd-lr = %v, want finite and > 0", c.gd.LearningRate)
	}
	if c.plotPath != "" {
		if ext := strings.ToLower(filepath.Ext(c.plotPath)); ext != ".png" && ext != ".svg" {
			return fmt.Errorf("-plot %q: want a .png or .svg file", c.plotPath)
		}
	}
	return nil
}
