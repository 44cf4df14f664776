package flow

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"testing"
)

var spreads = []float64{1, 10, 100}

// TestInvertibleL2SubBlocksInvert: with random weights, every sub-block of invertible-l2
// inverts random and adversarial inputs at spreads 1 to 100 to a reconstruction error of
// at most 1e-9; its iterations stay within the geometric bound of its certified constant
// L <= c, 1 + ceil(log(tol / ||g(y)||) / log L); and no ratio of successive steps exceeds c.
func TestInvertibleL2SubBlocksInvert(t *testing.T) {
	for _, arch := range []string{"invertible-l2", "invertible-l2+gain", "invertible-l2+ball"} {
		_, st := testStack(t, arch, 1)
		invertEverySubBlock(t, st)
	}
}

// invertEverySubBlock is TestInvertibleL2SubBlocksInvert on one stack.
func invertEverySubBlock(t *testing.T, st *Stack) {
	t.Helper()
	opt := Options{Tol: 1e-11, MaxIter: 1000}
	for _, s := range st.Subs {
		lip, cert := s.Lipschitz()
		if !cert || lip > testC*(1+1e-9) {
			t.Fatalf("%s: Lipschitz constant %.12g (certified %t), want a certified one of at most c = %g", s.Name, lip, cert, testC)
		}
		for _, kind := range []string{"random", "adversarial"} {
			for _, spread := range spreads {
				what := fmt.Sprintf("%s, %s input at spread %g", s.Name, kind, spread)
				x := input(kind, spread, 3)
				y, err := s.Forward(x)
				if err != nil {
					t.Fatal(err)
				}
				_, res, err := s.Invert(y, x, opt)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				bound := 1 + int(math.Ceil(math.Log(opt.Tol/res.Steps[0])/math.Log(lip)))
				if res.Error > 1e-9 || res.Iterations > bound || res.Rate > testC {
					t.Errorf("%s: error %.3g (want <= 1e-9), %d iterations (bound %d), contraction rate %.4g (want <= %g)",
						what, res.Error, res.Iterations, bound, res.Rate, testC)
				}
				t.Logf("%s: %d iterations (bound %d; log(tol)/log(c) + 5 = %.0f), error %.2g, rate %.3g",
					what, res.Iterations, bound, math.Log(opt.Tol)/math.Log(testC)+5, res.Error, res.Rate)
			}
		}
	}
}

// TestDPControlFailsOnAdversarialInputs: the attention sub-blocks of invertible-dp, whose
// naive constant claims contraction (c = 0.9), invert the docs/math.md, "Attention" input at spread 1
// but fail to converge from spread 10 on, where the measured Jacobian inf-norm of their
// branch exceeds 1 and grows quadratically with the spread; the MLP sub-blocks invert
// everything.
func TestDPControlFailsOnAdversarialInputs(t *testing.T) {
	_, st := testStack(t, "invertible-dp", 1)
	opt := Options{Tol: 1e-11, MaxIter: 500}
	for _, s := range st.Subs {
		lip, cert := s.Lipschitz()
		attn := strings.HasSuffix(s.Name, ".attn")
		if cert == attn || lip > testC*(1+1e-9) {
			t.Fatalf("%s: Lipschitz constant %.12g, certified %t", s.Name, lip, cert)
		}
		var previous float64 // ||J||_inf at a tenth of the spread
		for _, spread := range []float64{1, 10, 100, 1000} {
			x := Adversarial(testBatch, testT, testD, spread, 3)
			y, err := s.Forward(x)
			if err != nil {
				t.Fatal(err)
			}
			_, res, err := s.Invert(y, x, opt)
			what := fmt.Sprintf("%s at spread %g", s.Name, spread)
			if !attn || spread == 1 {
				if err != nil || res.Error > 1e-9 {
					t.Errorf("%s: %v, error %.3g; want an inversion", what, err, res.Error)
				}
				continue
			}
			var nc *NotConvergedError
			if !errors.Is(err, ErrNotConverged) || !errors.As(err, &nc) || nc.Iterations != opt.MaxIter || res.Converged {
				t.Errorf("%s: error %v, converged %t; want ErrNotConverged after %d iterations", what, err, res.Converged, opt.MaxIter)
			}
			jac := jacobianInf(exactJacobian(t, s, firstSequence(x)))
			if jac <= 1 || (previous > 0 && jac < 50*previous) {
				t.Errorf("%s: ||J||_inf = %.3g (%.3g at a tenth of the spread), want > 1 and growing like spread^2", what, jac, previous)
			}
			previous = jac
			t.Logf("%s: not converged, last step %.3g, error %.3g, ||J||_inf %.3g at the input", what, res.Step, res.Error, jac)
		}
	}
}

func TestNotConvergedIsTypedAndLogged(t *testing.T) {
	_, st := testStack(t, "invertible-l2", 2)
	s := st.Subs[1]
	x := input("random", 1, 4)
	y, err := s.Forward(x)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	_, res, err := s.Invert(y, x, Options{Tol: 1e-11, MaxIter: 2, Log: slog.New(slog.NewTextHandler(&log, nil))})
	var nc *NotConvergedError
	if !errors.As(err, &nc) || nc.Block != s.Name || nc.Iterations != 2 || res.Converged || len(res.Steps) != 2 {
		t.Fatalf("2 iterations: error %v, result %+v; want a NotConvergedError after 2", err, res)
	}
	if !strings.Contains(log.String(), "did not converge") || !strings.Contains(log.String(), s.Name) {
		t.Errorf("log %q does not report the failure", log.String())
	}
}

func TestBadInputsGiveErrors(t *testing.T) {
	_, st := testStack(t, "invertible-l2", 2)
	s := st.Subs[0]
	x := input("random", 1, 4)
	for _, c := range []struct {
		y, x []float64
		opt  Options
		want string
	}{
		{x[:5], nil, Options{Tol: 1e-9, MaxIter: 5}, "want B*T*D"},
		{x, x[:5], Options{Tol: 1e-9, MaxIter: 5}, "true input"},
		{x, nil, Options{Tol: 0, MaxIter: 5}, "tolerance"},
		{x, nil, Options{Tol: 1e-9}, "iteration cap"},
	} {
		if _, _, err := s.Invert(c.y, c.x, c.opt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one mentioning %q", err, c.want)
		}
	}
	m, _ := testStack(t, "invertible-l2", 2)
	if _, err := Embed(m, []int{1, 2, 3}); err == nil {
		t.Error("3 ids were embedded with a context of 8")
	}
	if _, err := Embed(m, make([]int, testT)); err != nil {
		t.Error(err)
	}
}
