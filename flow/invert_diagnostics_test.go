package flow

import (
	"bytes"
	"errors"
	"log/slog"
	"math"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/layers"
)

// linearSubBlock is a sub-block of one token of width 2, inverted in the inf-norm, whose
// branch is g(x) = x m (m 2 x 2, row-major): a map whose every iterate is known.
func linearSubBlock(t *testing.T, m []float64) *SubBlock {
	t.Helper()
	branch := func(g *layers.Graph, x *G.Node) (*G.Node, error) {
		w := G.NodeFromAny(g.G, tensor.New(tensor.WithShape(2, 2), tensor.WithBacking(append([]float64(nil), m...))), G.WithName("m"))
		return G.Mul(x, w)
	}
	s, err := newSubBlock("linear", SeqInf, branch, func() (float64, bool) { return 1, false }, 1, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// jordanA is a of the Jordan-like branch g(x) = x [[a, 0], [1, a]] inverted from
// y = (0, 1): the k-th step (from 0) is x_{k+1} - x_k = ±((k+1) a^k, a^{k+1}), of inf-norm
// (k+1) a^k, so successive steps have the ratios a (k+1)/k, which fall from 2a to a.
const jordanA = 0.45

// jordanStep is the inf-norm of step k of the Jordan-like branch.
func jordanStep(k int) float64 { return float64(k+1) * math.Pow(jordanA, float64(k)) }

// jordanBlock is the sub-block of the Jordan-like branch and its output y.
func jordanBlock(t *testing.T) (*SubBlock, []float64) {
	return linearSubBlock(t, []float64{jordanA, 0, 1, jordanA}), []float64{0, 1}
}

// TestInvertNonFiniteStepIsNotConverged: a branch whose value is NaN, or infinite, stops the
// inversion at its first step, which is not converged: a *NotConvergedError wrapping
// ErrNotConverged that names the block, the one iteration and the step, also logged.
func TestInvertNonFiniteStepIsNotConverged(t *testing.T) {
	for _, c := range []struct {
		name string
		m, y []float64
		want string // the step as the error prints it
	}{
		{"NaN", []float64{math.NaN(), 0, 0, 0.5}, []float64{1, 2}, "NaN"},
		{"+Inf", []float64{1e308, 0, 0, 1e308}, []float64{10, 10}, "+Inf"},
	} {
		s := linearSubBlock(t, c.m)
		var log bytes.Buffer
		_, res, err := s.Invert(c.y, nil, Options{Tol: 1e-9, MaxIter: 50, Log: slog.New(slog.NewTextHandler(&log, nil))})
		var nc *NotConvergedError
		if !errors.As(err, &nc) || !errors.Is(err, ErrNotConverged) {
			t.Fatalf("%s branch: error %v, want a *NotConvergedError", c.name, err)
		}
		if res.Converged || res.Iterations != 1 || nc.Iterations != 1 || len(res.Steps) != 1 {
			t.Errorf("%s branch: converged %t after %d iterations (error: %d), steps %v; want not converged after 1",
				c.name, res.Converged, res.Iterations, nc.Iterations, res.Steps)
		}
		if nonFinite := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }; !nonFinite(res.Step) || !nonFinite(nc.Step) {
			t.Errorf("%s branch: step %v (error: %v), want the non-finite step", c.name, res.Step, nc.Step)
		}
		if !strings.Contains(err.Error(), "step "+c.want) || !strings.Contains(err.Error(), s.Name) {
			t.Errorf("%s branch: error %q does not give the block and the step %s", c.name, err, c.want)
		}
		if !strings.Contains(log.String(), "did not converge") {
			t.Errorf("%s branch: log %q does not report the failure", c.name, log.String())
		}
	}
}

// TestInvertStopsAtTheTolerance: with the tolerance 1% below step K = 10 of the Jordan-like
// branch, an inversion capped at K+1 iterations ends on that step and is not converged,
// and an uncapped one stops at the next step, K+2 iterations, converged.
func TestInvertStopsAtTheTolerance(t *testing.T) {
	const k = 10
	s, y := jordanBlock(t)
	tol := jordanStep(k) / 1.01
	_, res, err := s.Invert(y, nil, Options{Tol: tol, MaxIter: k + 1})
	if !errors.Is(err, ErrNotConverged) || res.Converged || res.Iterations != k+1 {
		t.Errorf("capped at %d: error %v, converged %t after %d iterations with step %.6g, tolerance %.6g; want not converged",
			k+1, err, res.Converged, res.Iterations, res.Step, tol)
	}
	if math.Abs(res.Step-jordanStep(k)) > 1e-12 {
		t.Errorf("capped at %d: last step %.15g, want %.15g", k+1, res.Step, jordanStep(k))
	}
	_, res, err = s.Invert(y, nil, Options{Tol: tol, MaxIter: 100})
	if err != nil || !res.Converged || res.Iterations != k+2 || math.Abs(res.Step-jordanStep(k+1)) > 1e-12 {
		t.Errorf("uncapped: error %v, converged %t after %d iterations with step %.6g; want converged after %d with step %.6g",
			err, res.Converged, res.Iterations, res.Step, k+2, jordanStep(k+1))
	}
	for i, step := range res.Steps {
		if math.Abs(step-jordanStep(i)) > 1e-12 {
			t.Errorf("step %d is %.15g, want %.15g", i, step, jordanStep(i))
		}
	}
}

// TestInvertRateIsTheLargestRatio: the rate of an inversion is the largest ratio of
// successive steps above the noise floor: for the Jordan-like branch, whose ratios
// a (k+1)/k fall from 2a = 0.9 to about a = 0.45 over the iterations, it is the first,
// 2a, not the last or the smallest.
func TestInvertRateIsTheLargestRatio(t *testing.T) {
	s, y := jordanBlock(t)
	_, res, err := s.Invert(y, nil, Options{Tol: 1e-11, MaxIter: 200})
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * jordanA; math.Abs(res.Rate-want) > 1e-12 {
		t.Errorf("rate %.15g, want the largest ratio of successive steps %.15g", res.Rate, want)
	}
	n := len(res.Steps)
	if last := res.Steps[n-1] / res.Steps[n-2]; !(last < 0.5) {
		t.Errorf("last ratio %v: want ratios that fall to about a = %g", last, jordanA)
	}
}
