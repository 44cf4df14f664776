package expressive

import (
	"errors"
	"testing"
)

// threshold returns an eval passing exactly at d >= th, counting its calls.
func threshold(th int, calls *int) func(int) (DResult, error) {
	return func(d int) (DResult, error) {
		*calls++
		return DResult{D: d, Pass: d >= th}, nil
	}
}

func TestSmallestDExact(t *testing.T) {
	for _, th := range []int{1, 2, 3, 37, 64, 65, 1000} {
		calls := 0
		res, err := SmallestD(threshold(th, &calls), SearchOptions{Start: 1, Max: 4096})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Found || res.D != th || res.FailBelow != th-1 {
			t.Fatalf("threshold %d: found %v d %d fail below %d", th, res.Found, res.D, res.FailBelow)
		}
		if calls != len(res.Tried) || calls > 2*12+1 {
			t.Fatalf("threshold %d: %d evaluations", th, calls)
		}
	}
}

func TestSmallestDRelTol(t *testing.T) {
	calls := 0
	res, err := SmallestD(threshold(1000, &calls), SearchOptions{Start: 1, Max: 1 << 20, RelTol: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Found || res.D < 1000 || float64(res.D-res.FailBelow) > 0.05*float64(res.FailBelow) {
		t.Fatalf("got d %d, fail below %d", res.D, res.FailBelow)
	}
}

func TestSmallestDNotFoundAndStart(t *testing.T) {
	calls := 0
	res, err := SmallestD(threshold(5000, &calls), SearchOptions{Start: 1, Max: 3000})
	if err != nil {
		t.Fatal(err)
	}
	if res.Found || res.FailBelow != 3000 || res.Tried[len(res.Tried)-1].D != 3000 {
		t.Fatalf("beyond Max: %+v", res)
	}
	// A start that already passes is bisected down to the true threshold.
	res, err = SmallestD(threshold(6, &calls), SearchOptions{Start: 20, Max: 100})
	if err != nil || res.D != 6 {
		t.Fatalf("start above the threshold: d %d, %v", res.D, err)
	}
	if _, err := SmallestD(threshold(1, &calls), SearchOptions{Start: 0, Max: 10}); err == nil {
		t.Error("start 0 gave no error")
	}
	boom := errors.New("boom")
	if _, err := SmallestD(func(int) (DResult, error) { return DResult{}, boom }, SearchOptions{Start: 1, Max: 2}); !errors.Is(err, boom) {
		t.Errorf("eval error not returned: %v", err)
	}
}

func TestSmallestDWalk(t *testing.T) {
	for _, c := range []struct{ th, start, max int }{
		{1, 1, 10}, {1, 4, 10}, {5, 5, 10}, {5, 2, 10}, {5, 9, 10}, {7, 3, 100},
	} {
		calls := 0
		res, err := SmallestD(threshold(c.th, &calls), SearchOptions{Start: c.start, Max: c.max, Walk: true})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Found || res.D != c.th || res.FailBelow != c.th-1 {
			t.Fatalf("threshold %d from %d: found %v d %d fail below %d", c.th, c.start, res.Found, res.D, res.FailBelow)
		}
		want := c.th - c.start + 1 // up: the failing d from start, then the passing one
		if c.start >= c.th {
			want = c.start - c.th + 1 + min(1, c.th-1) // down: the passing d, then one failing (none below 1)
		}
		if calls != want || len(res.Tried) != calls {
			t.Fatalf("threshold %d from %d: %d evaluations, %d recorded, want %d", c.th, c.start, calls, len(res.Tried), want)
		}
	}
	calls := 0
	res, err := SmallestD(threshold(50, &calls), SearchOptions{Start: 3, Max: 8, Walk: true})
	if err != nil || res.Found || res.FailBelow != 8 || calls != 6 {
		t.Fatalf("walk beyond Max: %+v, %d calls, %v", res, calls, err)
	}
}

func TestCellJL(t *testing.T) {
	c := Cell{Method: MethodJL, L: 32, K: 1, Trials: 10, Eps: 0.1, Delta: 0.1, Range: 10, Margin: DefaultMargin, Seed: 3}
	res, err := c.Run(SearchOptions{Start: 1, Max: 1 << 14}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Search.Found {
		t.Fatalf("jl k = 1 found no d up to 2^14: %+v", res.Search.Tried)
	}
	last := map[int]DResult{}
	for _, r := range res.Search.Tried {
		last[r.D] = r
		if r.Trials != 10 {
			t.Fatalf("jl evaluated %d targets at d = %d, want all 10", r.Trials, r.D)
		}
	}
	if !last[res.Search.D].Pass || last[res.Search.D].Successes < 9 {
		t.Fatalf("reported d = %d did not pass", res.Search.D)
	}
	if fb := res.Search.FailBelow; fb != res.Search.D-1 || last[fb].Pass {
		t.Fatalf("d = %d - 1 = %d should have been tried and failed", res.Search.D, fb)
	}
	again, _ := c.Run(SearchOptions{Start: 1, Max: 1 << 14}, nil)
	if again.Search.D != res.Search.D || len(again.Search.Tried) != len(res.Search.Tried) {
		t.Fatal("the same seed gave a different search")
	}
}

func TestCellGDEarlyStop(t *testing.T) {
	c := Cell{Method: MethodGD, L: 16, K: 2, Trials: 5, Eps: 0.1, Delta: 0.2, Range: 10, Margin: DefaultMargin,
		GD: GDOptions{MaxIter: 300, LearningRate: 0.05}, EarlyStop: true, Seed: 1}
	seen := 0
	res, err := c.Run(SearchOptions{Start: 1, Max: 64, RelTol: 0.3}, func(DResult) { seen++ })
	if err != nil {
		t.Fatal(err)
	}
	if !res.Search.Found || seen != len(res.Search.Tried) {
		t.Fatalf("gd search: %+v (progress called %d times)", res.Search, seen)
	}
	for _, r := range res.Search.Tried {
		if r.Trials > 5 || (r.Pass && r.Successes != 4) || (!r.Pass && r.Trials-r.Successes != 2) {
			t.Fatalf("early stop: %+v, want to stop at 4 successes or 2 failures", r)
		}
	}
}

func TestCellErrors(t *testing.T) {
	good := Cell{Method: MethodJL, L: 4, K: 1, Trials: 2, Eps: 0.1, Delta: 0.1, Range: 2}
	for _, bad := range []Cell{
		func(c Cell) Cell { c.Method = "x"; return c }(good),
		func(c Cell) Cell { c.Trials = 0; return c }(good),
		func(c Cell) Cell { c.Delta = 1; return c }(good),
		func(c Cell) Cell { c.Eps = 1; return c }(good),
		func(c Cell) Cell { c.Range = 0.5; return c }(good),
	} {
		if _, err := bad.Run(SearchOptions{Start: 1, Max: 4}, nil); err == nil {
			t.Errorf("cell %+v gave no error", bad)
		}
	}
}
