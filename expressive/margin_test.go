package expressive

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The margin interval of a target is exactly the set of margins at which the plain
// construction succeeds: checked against JLSet.Try on a grid of margins.
func TestMarginIntervalMatchesTry(t *testing.T) {
	const L, eps = 24, 0.1
	gram, err := NewGram(L, 5)
	if err != nil {
		t.Fatal(err)
	}
	inside, outside := 0, 0
	for _, d := range []int{30, 200, 3000} {
		gg, err := gram.At(d)
		if err != nil {
			t.Fatal(err)
		}
		probe, err := NewJLSet(gg, eps, 0)
		if err != nil {
			t.Fatal(err)
		}
		for n := range 6 {
			tg, err := RandomTarget(L, 1+n%3, 10, rand.New(rand.NewPCG(uint64(n), 9)))
			if err != nil {
				t.Fatal(err)
			}
			iv, err := probe.MarginInterval(tg)
			if err != nil {
				t.Fatal(err)
			}
			for m := 0.0; m <= 8; m += 0.05 {
				if !iv.Empty() && (math.Abs(m-iv.Lo) < 1e-6 || math.Abs(m-iv.Hi) < 1e-6) {
					continue // on an end: rounding decides
				}
				set, _ := NewJLSet(gg, eps, m)
				p, _, err := set.Try(tg)
				if err != nil {
					t.Fatal(err)
				}
				if p.Success(eps) != iv.Contains(m) {
					t.Fatalf("d = %d, target %d, margin %v: success %v but interval %+v", d, n, m, p.Success(eps), iv)
				}
				if iv.Contains(m) {
					inside++
				} else {
					outside++
				}
			}
		}
	}
	if inside == 0 || outside == 0 {
		t.Fatalf("%d margins inside and %d outside the intervals: the test exercises nothing", inside, outside)
	}
}

func TestBestCommonMargin(t *testing.T) {
	inf := math.Inf(1)
	ivs := []MarginInterval{{0, 1}, {0.5, 2}, {0.8, 3}, {2.5, inf}, {4, 3}, {2.6, inf}}
	m, count, seg := bestCommonMargin(ivs, 7)
	if count != 3 || seg != (MarginInterval{0.8, 1}) || m != 0.9 {
		t.Fatalf("got margin %v, count %d, segment %+v, want 0.9, 3, [0.8, 1]", m, count, seg)
	}
	if m, count, _ := bestCommonMargin([]MarginInterval{{2, inf}}, 7); count != 1 || m != 3 {
		t.Fatalf("unbounded interval: margin %v count %d, want 3 and 1", m, count)
	}
	if m, count, _ := bestCommonMargin([]MarginInterval{{1, 1}, {1, 2}}, 7); count != 2 || m != 1 {
		t.Fatalf("touching intervals: margin %v count %d, want 1 and 2", m, count)
	}
	if m, count, _ := bestCommonMargin([]MarginInterval{{3, 2}}, 7); count != 0 || m != 7 {
		t.Fatalf("no interval: margin %v count %d, want the fallback 7 and 0", m, count)
	}
}

// The margin search never gives a larger d than a fixed margin it could have used: with
// MarginCell and MarginTarget the smallest d is at most that of every fixed margin, and
// target at most cell; with the same seed a search repeats exactly.
func TestMarginSearchNoWorseThanFixed(t *testing.T) {
	opts := SearchOptions{Start: 1, Max: 1 << 18}
	for _, k := range []int{1, 2} {
		for _, L := range []int{8, 16} {
			c := Cell{Method: MethodJL, L: L, K: k, Trials: 10, Eps: 0.1, Delta: 0.1, Range: 10, Seed: 2}
			best := map[MarginMode]CellResult{}
			for _, mode := range []MarginMode{MarginCell, MarginTarget} {
				c.Margins = mode
				res, err := c.Run(opts, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !res.Search.Found {
					t.Fatalf("k = %d, L = %d, margin %v: no d found", k, L, mode)
				}
				again, err := c.Run(opts, nil)
				if err != nil {
					t.Fatal(err)
				}
				if again.Search.D != res.Search.D || len(again.Search.Tried) != len(res.Search.Tried) {
					t.Fatalf("k = %d, L = %d, margin %v: the same seed gave a different search", k, L, mode)
				}
				for i, r := range res.Search.Tried {
					if a := again.Search.Tried[i]; a.Successes != r.Successes || a.Margin != r.Margin {
						t.Fatalf("k = %d, L = %d, margin %v, d = %d: rerun differs", k, L, mode, r.D)
					}
					if mode == MarginCell && r.Successes != r.CommonSuccesses {
						t.Fatalf("k = %d, L = %d, d = %d: %d successes at the common margin %v, predicted %d",
							k, L, r.D, r.Successes, r.Margin, r.CommonSuccesses)
					}
					if mode == MarginTarget && r.Successes < r.CommonSuccesses {
						t.Fatalf("k = %d, L = %d, d = %d: per-target margins realise %d, one margin %d",
							k, L, r.D, r.Successes, r.CommonSuccesses)
					}
				}
				best[mode] = res
			}
			if best[MarginTarget].Search.D > best[MarginCell].Search.D {
				t.Fatalf("k = %d, L = %d: target d %d > cell d %d", k, L, best[MarginTarget].Search.D, best[MarginCell].Search.D)
			}
			for _, m := range []float64{0, 0.5, 1, 2, 4} {
				c.Margins, c.Margin = MarginFixed, m
				res, err := c.Run(opts, nil)
				if err != nil {
					t.Fatal(err)
				}
				if res.Search.Found && res.Search.D < best[MarginCell].Search.D {
					t.Fatalf("k = %d, L = %d: fixed margin %v gives d %d < the cell search's %d",
						k, L, m, res.Search.D, best[MarginCell].Search.D)
				}
			}
		}
	}
}

// evalCellAt runs the cell's trials at width d alone.
func evalCellAt(t *testing.T, c Cell, d int) DResult {
	t.Helper()
	targets := make([]*Target, c.Trials)
	for n := range targets {
		tg, err := RandomTarget(c.L, c.K, c.Range, streamRNG(c.Seed, tagTarget, uint64(c.L), uint64(c.K), uint64(n)))
		if err != nil {
			t.Fatal(err)
		}
		targets[n] = tg
	}
	prepare, err := c.preparer(targets)
	if err != nil {
		t.Fatal(err)
	}
	try, _, err := prepare(d)
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.evalAt(d, targets, try)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// At every d a fixed margin's search tried, one common margin (MarginCell) realises at
// least as many targets as that fixed margin, and a margin per target (MarginTarget) at
// least as many as the common one: the guarantee behind the smaller d, which holds at each
// d whether or not success is monotone in d.
func TestMarginSearchNoWorseAtEachD(t *testing.T) {
	c := Cell{Method: MethodJL, L: 16, K: 2, Trials: 8, Eps: 0.1, Delta: 0.1, Range: 10, Seed: 4}
	for _, m := range []float64{0, 0.5, 2} {
		c.Margins, c.Margin = MarginFixed, m
		res, err := c.Run(SearchOptions{Start: 1, Max: 1 << 18}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, fixed := range res.Search.Tried {
			cell, target := c, c
			cell.Margins, target.Margins = MarginCell, MarginTarget
			rc, rt := evalCellAt(t, cell, fixed.D), evalCellAt(t, target, fixed.D)
			if rc.Successes < fixed.Successes || rt.Successes < rc.Successes {
				t.Fatalf("margin %v, d = %d: fixed %d, cell %d (at %v), target %d successes",
					m, fixed.D, fixed.Successes, rc.Successes, rc.Margin, rt.Successes)
			}
		}
	}
}

func TestParseMarginMode(t *testing.T) {
	for _, m := range []MarginMode{MarginFixed, MarginCell, MarginTarget} {
		if got, err := ParseMarginMode(m.String()); err != nil || got != m {
			t.Errorf("%v: parsed %v, %v", m, got, err)
		}
	}
	if _, err := ParseMarginMode("auto"); err == nil {
		t.Error("auto gave no error")
	}
	c := Cell{Method: MethodJL, L: 4, K: 1, Trials: 2, Eps: 0.1, Delta: 0.1, Range: 2, Margins: MarginMode(7)}
	if _, err := c.Run(SearchOptions{Start: 1, Max: 4}, nil); err == nil {
		t.Error("an unknown margin mode gave no error")
	}
}
