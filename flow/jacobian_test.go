package flow

import (
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"lipformer/lipschitz"
)

// jacobianInf is ||J||_inf, the norm in which attention sub-blocks contract.
func jacobianInf(j *mat.Dense) float64 { return lipschitz.JacobianNormInf(j) }

// TestExactJacobianMatchesFiniteDifferences checks the test's Jacobian helper against
// central differences of the compiled branch, for both kinds of sub-block.
func TestExactJacobianMatchesFiniteDifferences(t *testing.T) {
	_, st := testStack(t, "invertible-l2", 5)
	for _, s := range st.Subs[:2] {
		x := firstSequence(input("random", 1, 6))
		f := func(v []float64) []float64 {
			batch := make([]float64, testBatch*testT*testD)
			copy(batch, v)
			y, err := s.Branch(batch)
			if err != nil {
				t.Fatal(err)
			}
			return y[:len(v)]
		}
		want, err := lipschitz.Jacobian(f, x, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		got := exactJacobian(t, s, x)
		var diff mat.Dense
		diff.Sub(got, want)
		if e := mat.Norm(&diff, 2) / mat.Norm(want, 2); e > 1e-7 {
			t.Errorf("%s: exact Jacobian differs from finite differences by %.3g (relative)", s.Name, e)
		}
	}
}

// TestCertifiedConstantBoundsJacobian: at random and adversarial inputs of spreads 1 to
// 100, the exact Jacobian of every invertible-l2 branch has, in the sub-block's norm, an
// operator norm of at most the certified constant: ||J||_inf for attention under the kim
// bound, the token norm (a lower estimate, lipschitz.JacobianNormTok2) under token2, and
// for the MLP, which acts on each token alone (J is block diagonal, checked), the largest
// 2-norm of a diagonal block, which is ||J||_2. The ball-norm stack runs at a radius that
// the inputs at every spread exceed, so that the projection is active.
func TestCertifiedConstantBoundsJacobian(t *testing.T) {
	for _, arch := range []string{"invertible-l2", "invertible-l2+gain", "invertible-l2+ball"} {
		_, st := testStack(t, arch, 1)
		boundEveryJacobian(t, st)
	}
}

// boundEveryJacobian is TestCertifiedConstantBoundsJacobian on one stack.
func boundEveryJacobian(t *testing.T, st *Stack) {
	t.Helper()
	for _, s := range st.Subs {
		lip, _ := s.Lipschitz()
		var worst float64
		for _, kind := range []string{"random", "adversarial"} {
			for _, spread := range spreads {
				j := exactJacobian(t, s, firstSequence(input(kind, spread, 7)))
				var norm float64
				switch {
				case s.Norm == SeqInf:
					norm = jacobianInf(j)
				case strings.HasSuffix(s.Name, ".attn"):
					var err error
					if norm, err = lipschitz.JacobianNormTok2(j, testT, 50); err != nil {
						t.Fatal(err)
					}
				default:
					assertBlockDiagonal(t, s.Name, j, testD)
					norm = lipschitz.JacobianNorm2(j)
				}
				if norm > lip {
					t.Errorf("%s, %s input at spread %g: Jacobian norm %.6g above the certified %.6g", s.Name, kind, spread, norm, lip)
				}
				worst = max(worst, norm/lip)
			}
		}
		t.Logf("%s (%v): largest measured/certified ratio %.3g", s.Name, s.Norm, worst)
	}
}

// assertBlockDiagonal fails unless j has no entry outside its (d, d) diagonal blocks.
func assertBlockDiagonal(t *testing.T, what string, j *mat.Dense, d int) {
	t.Helper()
	r, c := j.Dims()
	for a := range r {
		for b := range c {
			if a/d != b/d && j.At(a, b) != 0 {
				t.Fatalf("%s: J[%d,%d] = %g couples two tokens", what, a, b, j.At(a, b))
			}
		}
	}
}
