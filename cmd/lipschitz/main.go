// Command lipschitz certifies trained models and measures empirical lower bounds on the
// Lipschitz constant of multihead attention and compares them with the upper bounds of
// Kim et al. (2021, Thm 3.2), reproducing their section 5.1 (docs/math.md): the
// experiment of package lipschitz/tightness, which describes the method.
//
// For each sequence length N (and box radius R) it maximises ||J(X)||_p over inputs X
// by Adam from -inits starts of -steps steps each; the best value met is a lower bound on
// Lip_p. For tied L2 attention it also reports the upper bound and their ratio. Every
// record also holds the best value over two-cluster inputs, and one of the starts climbs
// from it (-construction); the others start at random, and their best is reported apart.
//
// Defaults reproduce Kim et al. 5.1: L2 attention, D = H = 1, unit weights
// (W^Q = W^V = W^O = 1), N from 2 to 1000 on a log grid, 50 starts per N
// (49 random), the inf-norm. The default 200 steps of size 0.03, decayed to 0.003,
// converge on this problem; the full Jacobian is computed every -refresh 5
// steps, the arg-max row followed in between (as good as every step, five
// times faster). Each unboxed start is an N(0, 1) draw scaled to the edge of
// the plateau around 0 (-escape; inside it ||J||_inf = 1 with a zero
// gradient), and climbs twice more from its best input plus noise (-restarts,
// -perturb), the restarts sharing half the steps: with -construction=false, 5
// random starts of 300 steps then come within 1% of 50 at N = 2 to 128, where
// the earlier X ~ N(0, sigma^2) with sigma log-uniform in [-init-min,
// -init-max] (-escape 0 -restarts 0) fell up to 18% short, and 5 of 200 steps
// within 2% of 50 such draws at N = 200 to 1000 (docs/lipschitz_search.md).
//
// With lists in -d and -heads, every (D, H) with H dividing D is run in turn
// (random weights need -weights random), and the table and plot show the
// lower bound over [K]'s bound (kim) and the product bound, and the token
// norm of J at the best input over the token-norm bound, against D:
//
//	lipschitz -d 2,4,8,16,32 -heads 1,2,4 -weights random -n 16,64 -steps 150 -refresh 25 -construction=false -json -plot docs/figures/lipschitz_shapes.png
//
// Dot-product attention is not Lipschitz: it is searched inside boxes ||X||_inf <= R
// (-radius, default 1,2,5,10,20,50); reaching R = 50 takes -steps 2000. With several
// radii, the first start of each radius begins at the previous radius's best input
// scaled (-warm).
//
// The human table and the fits (lower bound against W_0((N-1)/e) and
// log N - log log N; growth exponents in R) go to stdout, or to stderr with
// -json, which writes one JSON object per (N, R) to stdout instead.
//
// With -ckpt it instead prints the certificate of a trained model: the certified inf-norm,
// 2-norm and token-norm Lipschitz constants of every residual sub-block, the final
// LayerNorm and the head (from the current weights, N = the model's context), and their
// product, an upper bound for the map from the embedded sequence to the logits; then every
// tied L2 attention layer's bounds, contractive scale and certified constants, and with
// -search-n N searched lower bounds on N tokens and the looseness certified / lower.
//
//	lipschitz -ckpt out/run [-search-n 8] [-json]
//	lipschitz -json -csv docs/tables/lipschitz_l2.csv -plot docs/figures/lipschitz_l2.png > docs/tables/lipschitz_l2.jsonl
//	lipschitz -attn dp -n 2,8,32,128 -steps 2000 -json -plot docs/figures/lipschitz_dp.png > docs/tables/lipschitz_dp.jsonl
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

	"lipformer/internal/cli"
	"lipformer/lipschitz/search"
	"lipformer/lipschitz/tightness"
	"lipformer/ops"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "lipschitz:", err)
		os.Exit(1)
	}
}

// Defaults of the flags.
const (
	defaultNs      = "2,3,5,8,13,20,32,50,80,126,200,316,500,794,1000"
	defaultDPRadii = "1,2,5,10,20,50"
)

// config is the parsed command line: the experiment and what to do with its records.
type config struct {
	exp      tightness.Config
	json     bool
	csvPath  string
	plotPath string
	ckpt     string
	searchN  int
	whole    int
	shapes   []tightness.Shape // every (-d, -heads) pair with H dividing D
	records  string            // read the records from this file instead of searching
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("lipschitz", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &config{}
	attn := fs.String("attn", "l2", "attention: l2 (tied L2) or dp (dot product)")
	ns := fs.String("n", defaultNs, "comma-separated sequence lengths N")
	dims := fs.String("d", "1", "comma-separated widths D; with several D or H every pair with H dividing D is run (table and plot of the ratios against D)")
	heads := fs.String("heads", "1", "comma-separated heads H (each D must be a multiple of some H)")
	fs.BoolVar(&c.exp.Causal, "causal", false, "causal mask (row i attends to j <= i)")
	fs.StringVar(&c.exp.Weights, "weights", "unit", "weights: unit (every map the identity; 1 for D = 1) or random (N(0, 1/D) from -seed)")
	fs.StringVar(&c.exp.Engine, "engine", "auto", "Jacobian: auto (closed form for D = H = 1, else graph), graph or scalar")
	fs.IntVar(&c.exp.Search.Starts, "inits", 50, "starts per N (and R): a warm start and the two-cluster start, if any, then random")
	fs.IntVar(&c.exp.Search.Steps, "steps", 200, "optimizer steps (Adam) per start")
	fs.IntVar(&c.exp.Search.Refresh, "refresh", 5, "full Jacobian every this many steps; in between the ascent follows the last arg-max row or singular vector (cheaper)")
	fs.Float64Var(&c.exp.Search.LR, "lr", 0.03, "Adam step size in the units of X, decayed along a half cosine")
	fs.Float64Var(&c.exp.Search.LRFinal, "lr-final", search.DefaultLRFinal, "the last step size as a fraction of -lr, in (0, 1]")
	radius := fs.String("radius", "", "comma-separated box radii R for ||X||_inf <= R (0: no box); default none for l2, "+defaultDPRadii+" for dp")
	norm := fs.String("norm", "inf", "Jacobian norm: inf or 2")
	fs.Float64Var(&c.exp.Search.Escape, "escape", search.DefaultEscape, "unboxed starts: an N(0, 1) draw scaled to where ||J|| first exceeds 1 + this times ||J(0)||, the plateau's edge (0: X ~ N(0, sigma^2) as -init-min and -init-max say)")
	fs.Float64Var(&c.exp.Search.InitMin, "init-min", 0.2, "with -escape 0, unboxed starts: smallest sigma of X ~ N(0, sigma^2)")
	fs.Float64Var(&c.exp.Search.InitMax, "init-max", 2, "with -escape 0, unboxed starts: largest sigma (sigma is log-uniform per start)")
	restarts := fs.String("restarts", "", fmt.Sprintf("climbs of each start after the first, from its best input plus noise, sharing half the -steps (0: none); default %d for l2, 0 for dp, whose box needs the steps", search.DefaultRestarts))
	fs.Float64Var(&c.exp.Search.Perturb, "perturb", search.DefaultPerturb, "the restarts' noise, times the standard deviation of the best input's entries over sqrt(N)")
	fs.Uint64Var(&c.exp.Search.Seed, "seed", 1, "random seed: start s of every run draws from PCG(seed, s)")
	construction := fs.Bool("construction", true, "also evaluate the two-cluster inputs (about 70 Jacobians per cell), and climb from the best of them as one of the -inits starts")
	fs.BoolVar(&c.exp.Warm, "warm", true, "with several radii, start 0 of each radius begins at the previous radius's best input, scaled")
	fs.IntVar(&c.exp.Workers, "workers", 1, "goroutines sharing the starts (the result does not depend on it)")
	fs.BoolVar(&c.json, "json", false, "write one JSON object per (N, R) to stdout (human table to stderr)")
	fs.StringVar(&c.csvPath, "csv", "", "write one CSV row per (N, R) to this file")
	fs.StringVar(&c.plotPath, "plot", "", "plot the bounds to this .png or .svg file: against N, or against R when there are several radii")
	fs.StringVar(&c.records, "records", "", "instead of searching, read the JSON records of earlier -json runs from this file (concatenated) and write their table, CSV and plot")
	fs.StringVar(&c.ckpt, "ckpt", "", "instead of the experiment, certify a trained model: a run directory or checkpoint file")
	fs.IntVar(&c.whole, "whole", 1, "with -ckpt: search the whole model for a lower bound on its token-norm constant on this many random windows (about 7 x 90 runs of the model each), and print the looseness certified / lower, whole_lower and whole_looseness with -json (0: no search)")
	fs.IntVar(&c.searchN, "search-n", 0, "with -ckpt: search every tied L2 attention layer for lower bounds on sequences of this many tokens, with -inits starts of -steps steps, and print the looseness certified / lower (0: no search)")
	if err := cli.Parse(fs, args); err != nil {
		return nil, err
	}
	if c.whole < 0 {
		return nil, fmt.Errorf("-whole %d, want >= 0", c.whole)
	}
	if c.searchN < 0 {
		return nil, fmt.Errorf("-search-n %d, want >= 0", c.searchN)
	}
	var err error
	switch *attn {
	case "l2":
		c.exp.Kind = ops.L2
		c.exp.Search.Restarts = search.DefaultRestarts
	case "dp":
		c.exp.Kind = ops.DotProduct
	default:
		return nil, fmt.Errorf("-attn %q: want l2 or dp", *attn)
	}
	if *restarts != "" {
		if c.exp.Search.Restarts, err = strconv.Atoi(*restarts); err != nil || c.exp.Search.Restarts < 0 {
			return nil, fmt.Errorf("-restarts %q: want an integer >= 0", *restarts)
		}
	}
	c.exp.NoConstruction = !*construction
	if err := c.parseShapes(*dims, *heads); err != nil {
		return nil, err
	}
	if c.exp.Search.Norm, err = search.ParseNorm(*norm); err != nil {
		return nil, fmt.Errorf("-norm: %w", err)
	}
	if c.exp.Ns, err = cli.Ints("-n", *ns); err != nil {
		return nil, err
	}
	if *radius == "" && c.exp.Kind == ops.DotProduct {
		*radius = defaultDPRadii
	}
	if *radius == "" {
		c.exp.Radii = []float64{0}
	} else if c.exp.Radii, err = parseRadii(*radius); err != nil {
		return nil, err
	}
	return c, c.check()
}

// check validates the flags, naming the flag at fault.
func (c *config) check() error {
	e := &c.exp
	switch {
	case e.Weights != "unit" && e.Weights != "random":
		return fmt.Errorf("-weights %q: want unit or random", e.Weights)
	case e.Engine != "auto" && e.Engine != "graph" && e.Engine != "scalar":
		return fmt.Errorf("-engine %q: want auto, graph or scalar", e.Engine)
	case e.Engine == "scalar" && (e.Dim != 1 || e.Heads != 1):
		return fmt.Errorf("-engine scalar needs -d 1 and -heads 1, got %d and %d", e.Dim, e.Heads)
	case e.Search.Starts < 1:
		return fmt.Errorf("-inits = %d, want >= 1", e.Search.Starts)
	case e.Search.Steps < 0:
		return fmt.Errorf("-steps = %d, want >= 0", e.Search.Steps)
	case e.Search.Refresh < 1:
		return fmt.Errorf("-refresh = %d, want >= 1", e.Search.Refresh)
	case !(e.Search.LR > 0) || math.IsInf(e.Search.LR, 1):
		return fmt.Errorf("-lr = %v, want finite and > 0", e.Search.LR)
	case !(e.Search.LRFinal > 0 && e.Search.LRFinal <= 1):
		return fmt.Errorf("-lr-final = %v, want in (0, 1]", e.Search.LRFinal)
	case !(e.Search.Escape >= 0) || math.IsInf(e.Search.Escape, 1):
		return fmt.Errorf("-escape = %v, want finite and >= 0", e.Search.Escape)
	case e.Search.Restarts > 0 && (!(e.Search.Perturb > 0) || math.IsInf(e.Search.Perturb, 1)):
		return fmt.Errorf("-perturb = %v, want finite and > 0", e.Search.Perturb)
	case !(e.Search.InitMin > 0) || math.IsInf(e.Search.InitMin, 1):
		return fmt.Errorf("-init-min = %v, want finite and > 0", e.Search.InitMin)
	case !(e.Search.InitMax >= e.Search.InitMin) || math.IsInf(e.Search.InitMax, 1):
		return fmt.Errorf("-init-max = %v, want finite and >= -init-min = %v", e.Search.InitMax, e.Search.InitMin)
	case e.Workers < 1:
		return fmt.Errorf("-workers = %d, want >= 1", e.Workers)
	}
	if e.Kind == ops.DotProduct {
		for _, r := range e.Radii {
			if r == 0 {
				return fmt.Errorf("-radius 0: dot-product attention is not Lipschitz, its search needs a box (R > 0)")
			}
		}
	}
	if c.plotPath != "" {
		if ext := strings.ToLower(filepath.Ext(c.plotPath)); ext != ".png" && ext != ".svg" {
			return fmt.Errorf("-plot %q: want a .png or .svg file", c.plotPath)
		}
	}
	return nil
}

// parseShapes reads -d and -heads into c.shapes, the first shape into c.exp.
func (c *config) parseShapes(dims, heads string) error {
	ds, err := cli.Ints("-d", dims)
	if err != nil {
		return err
	}
	hs, err := cli.Ints("-heads", heads)
	if err != nil {
		return err
	}
	c.shapes = tightness.Shapes(ds, hs)
	for _, d := range ds {
		if len(tightness.Shapes([]int{d}, hs)) == 0 {
			return fmt.Errorf("-heads %s: none divides -d = %d", heads, d)
		}
	}
	c.exp.Dim, c.exp.Heads = c.shapes[0].Dim, c.shapes[0].Heads
	return nil
}

// parseRadii parses the comma-separated radii of -radius: finite, >= 0.
func parseRadii(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(v >= 0) || math.IsInf(v, 1) {
			return nil, fmt.Errorf("-radius: %q is not a finite number >= 0", f)
		}
		out = append(out, v)
	}
	return out, nil
}
