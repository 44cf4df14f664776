// Command lipschitz certifies trained models and measures empirical lower bounds on the Lipschitz constant
// of multihead attention and compares them with the upper bounds of Kim et
// al. (2021, Thm 3.2), reproducing their section 5.1 (docs/math.md).
//
// For each sequence length N (and box radius R) it maximises ||J(X)||_p, the
// norm of the exact (ND, ND) Jacobian of the layer, over inputs X by Adam
// from -inits random starts of -steps steps each (package
// lipschitz/search); the best value met is a lower bound on Lip_p. For tied
// L2 attention it also reports the upper bound (package lipschitz:
// L2MHABoundInf for -norm inf, the corrected L2MHABound2 for -norm 2, and
// the 2-norm formula as [K] state it next to it) and their ratio.
//
// Defaults reproduce Kim et al. 5.1: L2 attention, D = H = 1, unit weights
// (W^Q = W^V = W^O = 1), N from 2 to 1000 on a log grid, 50 random starts per
// N, the inf-norm. The default 200 steps of size 0.03, decayed to 0.003,
// converge on this problem (at N = 100 and 316, 300 to 1000 steps change the
// best value by under 1e-3 relatively); the starts draw X ~ N(0, sigma^2)
// with sigma log-uniform in [0.2, 2] (small starts sit on a plateau for small
// N, large ones end at poorer local maxima for large N); the full Jacobian is
// computed every -refresh 5 steps, the arg-max row followed in between (as
// good as every step at N = 100 and 316, five times faster). D = H = 1 layers
// use a closed-form Jacobian in plain Go (O(N^2) per step); others go
// through the layer's Gorgonia graph.
//
// Dot-product attention is not Lipschitz: it is searched inside boxes
// ||X||_inf <= R (-radius, default 1,2,5,10,20,50), starting uniformly in the
// box. Its maximum is a ridge of width about 1/R (the token whose row is
// uniform must stay near 0), which steps of size 0.03 resolve; reaching R = 50
// then takes -steps 2000. With several radii, the first start of each radius
// begins at the previous radius's best input scaled (-warm); the record keeps
// the best of the random starts alone too.
//
// As a check on the search, every record also holds the best value over
// two-cluster inputs (one token 0, the others alternately +t and -t, t up to
// R in a box, else 10, scanned and refined): for dot-product attention at
// t = R that is dp's unbounded construction (docs/math.md, "Attention"); for D = H = 1 L2 attention it
// reaches about 4 W_0((N-1)/e) + 1 - 2W/(W+1), within 2 of the upper bound.
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
//	lipschitz -json -csv docs/lipschitz_l2.csv -plot docs/lipschitz_l2.png > docs/lipschitz_l2.jsonl
//	lipschitz -attn dp -n 2,8,32,128 -steps 2000 -json -plot docs/lipschitz_dp.png > docs/lipschitz_dp.jsonl
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

// config is the parsed command line.
type config struct {
	kind             ops.AttentionKind
	ns               []int
	dim, heads       int
	causal           bool
	weights          string
	engine           string
	inits, steps     int
	refresh          int
	lr, lrFinal      float64
	radii            []float64 // 0 is no box
	norm             search.Norm
	initMin, initMax float64
	seed             uint64
	workers          int
	warm             bool
	json             bool
	csvPath          string
	plotPath         string
	ckpt             string
	searchN          int
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("lipschitz", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &config{}
	attn := fs.String("attn", "l2", "attention: l2 (tied L2) or dp (dot product)")
	ns := fs.String("n", defaultNs, "comma-separated sequence lengths N")
	fs.IntVar(&c.dim, "d", 1, "width D")
	fs.IntVar(&c.heads, "heads", 1, "heads H (D must be a multiple)")
	fs.BoolVar(&c.causal, "causal", false, "causal mask (row i attends to j <= i)")
	fs.StringVar(&c.weights, "weights", "unit", "weights: unit (every map the identity; 1 for D = 1) or random (N(0, 1/D) from -seed)")
	fs.StringVar(&c.engine, "engine", "auto", "Jacobian: auto (closed form for D = H = 1, else graph), graph or scalar")
	fs.IntVar(&c.inits, "inits", 50, "random starts per N (and R)")
	fs.IntVar(&c.steps, "steps", 200, "Adam steps per start")
	fs.IntVar(&c.refresh, "refresh", 5, "full Jacobian every this many steps; in between the ascent follows the last arg-max row or singular vector (cheaper)")
	fs.Float64Var(&c.lr, "lr", 0.03, "Adam step size in the units of X, decayed along a half cosine")
	fs.Float64Var(&c.lrFinal, "lr-final", search.DefaultLRFinal, "the last step size as a fraction of -lr, in (0, 1]")
	radius := fs.String("radius", "", "comma-separated box radii R for ||X||_inf <= R (0: no box); default none for l2, "+defaultDPRadii+" for dp")
	norm := fs.String("norm", "inf", "Jacobian norm: inf or 2")
	fs.Float64Var(&c.initMin, "init-min", 0.2, "unboxed starts: smallest sigma of X ~ N(0, sigma^2)")
	fs.Float64Var(&c.initMax, "init-max", 2, "unboxed starts: largest sigma (sigma is log-uniform per start)")
	seed := fs.Uint64("seed", 1, "random seed: start s of every run draws from PCG(seed, s)")
	fs.BoolVar(&c.warm, "warm", true, "with several radii, start 0 of each radius begins at the previous radius's best input, scaled")
	fs.IntVar(&c.workers, "workers", 1, "goroutines sharing the starts (the result does not depend on it)")
	fs.BoolVar(&c.json, "json", false, "write one JSON object per (N, R) to stdout (human table to stderr)")
	fs.StringVar(&c.csvPath, "csv", "", "write one CSV row per (N, R) to this file")
	fs.StringVar(&c.plotPath, "plot", "", "plot the bounds to this .png or .svg file: against N, or against R when there are several radii")
	fs.StringVar(&c.ckpt, "ckpt", "", "instead of the experiment, certify a trained model: a run directory or checkpoint file")
	fs.IntVar(&c.searchN, "search-n", 0, "with -ckpt: search every tied L2 attention layer for lower bounds on sequences of this many tokens, with -inits starts of -steps steps, and print the looseness certified / lower (0: no search)")
	if err := cli.Parse(fs, args); err != nil {
		return nil, err
	}
	c.seed = *seed
	if c.searchN < 0 {
		return nil, fmt.Errorf("-search-n %d, want >= 0", c.searchN)
	}
	var err error
	switch *attn {
	case "l2":
		c.kind = ops.L2
	case "dp":
		c.kind = ops.DotProduct
	default:
		return nil, fmt.Errorf("-attn %q: want l2 or dp", *attn)
	}
	if c.norm, err = search.ParseNorm(*norm); err != nil {
		return nil, fmt.Errorf("-norm: %w", err)
	}
	if c.ns, err = cli.Ints("-n", *ns); err != nil {
		return nil, err
	}
	if *radius == "" && c.kind == ops.DotProduct {
		*radius = defaultDPRadii
	}
	if *radius == "" {
		c.radii = []float64{0}
	} else if c.radii, err = parseRadii(*radius); err != nil {
		return nil, err
	}
	return c, c.check()
}

// check validates the flags, naming the flag at fault.
func (c *config) check() error {
	switch {
	case c.dim < 1:
		return fmt.Errorf("-d = %d, want >= 1", c.dim)
	case c.heads < 1 || c.dim%c.heads != 0:
		return fmt.Errorf("-heads = %d, want >= 1 and dividing -d = %d", c.heads, c.dim)
	case c.weights != "unit" && c.weights != "random":
		return fmt.Errorf("-weights %q: want unit or random", c.weights)
	case c.engine != "auto" && c.engine != "graph" && c.engine != "scalar":
		return fmt.Errorf("-engine %q: want auto, graph or scalar", c.engine)
	case c.engine == "scalar" && (c.dim != 1 || c.heads != 1):
		return fmt.Errorf("-engine scalar needs -d 1 and -heads 1, got %d and %d", c.dim, c.heads)
	case c.inits < 1:
		return fmt.Errorf("-inits = %d, want >= 1", c.inits)
	case c.steps < 0:
		return fmt.Errorf("-steps = %d, want >= 0", c.steps)
	case c.refresh < 1:
		return fmt.Errorf("-refresh = %d, want >= 1", c.refresh)
	case !(c.lr > 0) || math.IsInf(c.lr, 1):
		return fmt.Errorf("-lr = %v, want finite and > 0", c.lr)
	case !(c.lrFinal > 0 && c.lrFinal <= 1):
		return fmt.Errorf("-lr-final = %v, want in (0, 1]", c.lrFinal)
	case !(c.initMin > 0) || math.IsInf(c.initMin, 1):
		return fmt.Errorf("-init-min = %v, want finite and > 0", c.initMin)
	case !(c.initMax >= c.initMin) || math.IsInf(c.initMax, 1):
		return fmt.Errorf("-init-max = %v, want finite and >= -init-min = %v", c.initMax, c.initMin)
	case c.workers < 1:
		return fmt.Errorf("-workers = %d, want >= 1", c.workers)
	}
	if c.kind == ops.DotProduct {
		for _, r := range c.radii {
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
