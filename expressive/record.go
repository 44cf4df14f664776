package expressive

import "math"

// DRecord is the JSON form of the trials at one d (DResult).
type DRecord struct {
	D              int      `json:"d"`
	Successes      int      `json:"successes"`
	Trials         int      `json:"trials"`
	Rate           float64  `json:"rate"`
	Pass           bool     `json:"pass"`
	MaxLogRatio    *float64 `json:"max_log_ratio"` // null when not finite
	MaxLogLeak     *float64 `json:"max_log_leak"`  // null when not finite (-Inf: no off-support entry)
	MaxAbsLogit    float64  `json:"max_abs_logit"`
	MeanIterations float64  `json:"mean_iterations,omitempty"`
	// jl only (DResult.Margin and after); margin_hi is null when infinite.
	Margin          *float64 `json:"margin,omitempty"`
	MarginLo        *float64 `json:"margin_lo,omitempty"`
	MarginHi        *float64 `json:"margin_hi,omitempty"`
	CommonSuccesses int      `json:"common_successes,omitempty"`
}

// CellRecord is the JSON line of one cell (CellResult).
type CellRecord struct {
	Type      string    `json:"type"`
	Method    string    `json:"method"`
	L         int       `json:"L"`
	K         int       `json:"k"`
	Eps       float64   `json:"eps"`
	Delta     float64   `json:"delta"`
	Trials    int       `json:"trials"`
	Range     float64   `json:"range"`
	Margin    *float64  `json:"margin,omitempty"`
	Margins   string    `json:"margin_mode,omitempty"` // jl: fixed, cell or target (absent: fixed)
	Seed      uint64    `json:"seed"`
	Found     bool      `json:"found"`
	DMin      int       `json:"d_min,omitempty"`
	FailBelow int       `json:"d_fail_below"`
	Seconds   float64   `json:"seconds"`
	Tried     []DRecord `json:"tried"`
}

// FitRecord is the JSON line of one fit of d against x = log L or x = L.
type FitRecord struct {
	Type   string  `json:"type"`
	Method string  `json:"method"`
	K      int     `json:"k"`
	X      string  `json:"x"`
	A      float64 `json:"a"`
	B      float64 `json:"b"`
	R2     float64 `json:"r2"`
	N      int     `json:"n"`
}

// finite returns x, or nil when x is not finite.
func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// Record returns the JSON line of r.
func (r CellResult) Record() CellRecord {
	c := r.Cell
	rec := CellRecord{Type: "cell", Method: c.Method, L: c.L, K: c.K, Eps: c.Eps, Delta: c.Delta,
		Trials: c.Trials, Range: c.Range, Seed: c.Seed, Found: r.Search.Found, FailBelow: r.Search.FailBelow,
		Seconds: r.Seconds}
	jl := c.Method == MethodJL
	if jl {
		rec.Margin, rec.Margins = &c.Margin, c.Margins.String()
	}
	if r.Search.Found {
		rec.DMin = r.Search.D
	}
	for _, t := range r.Search.Tried {
		d := DRecord{D: t.D, Successes: t.Successes, Trials: t.Trials, Rate: t.Rate,
			Pass: t.Pass, MaxLogRatio: finite(t.MaxLogRatio), MaxLogLeak: finite(t.MaxLogLeak), MaxAbsLogit: t.MaxAbsLogit, MeanIterations: t.MeanIterations}
		if jl {
			d.Margin, d.MarginLo, d.MarginHi, d.CommonSuccesses = finite(t.Margin), finite(t.MarginLo), finite(t.MarginHi), t.CommonSuccesses
		}
		rec.Tried = append(rec.Tried, d)
	}
	return rec
}

// FitRecords returns the JSON lines of g's fits, against log L then L.
func (g *Group) FitRecords() []FitRecord {
	return []FitRecord{
		{Type: "fit", Method: g.Method, K: g.K, X: "log L", A: g.LogFit.A, B: g.LogFit.B, R2: g.LogFit.R2, N: g.LogFit.N},
		{Type: "fit", Method: g.Method, K: g.K, X: "L", A: g.LinFit.A, B: g.LinFit.B, R2: g.LinFit.R2, N: g.LinFit.N},
	}
}

// result rebuilds the cell result of a JSON line; a null measure becomes NaN, a null
// margin_hi +Inf. A jl record of before the margin modes (no margin_mode, no margin per d)
// is a fixed-margin one: each d gets the cell's margin and its successes as the common ones.
func (rec CellRecord) result() (CellResult, error) {
	c := Cell{Method: rec.Method, L: rec.L, K: rec.K, Trials: rec.Trials, Eps: rec.Eps,
		Delta: rec.Delta, Range: rec.Range, Seed: rec.Seed}
	if rec.Margin != nil {
		c.Margin = *rec.Margin
	}
	if rec.Margins != "" {
		m, err := ParseMarginMode(rec.Margins)
		if err != nil {
			return CellResult{}, err
		}
		c.Margins = m
	}
	sr := SearchResult{Found: rec.Found, D: rec.DMin, FailBelow: rec.FailBelow}
	for _, t := range rec.Tried {
		d := DResult{D: t.D, Successes: t.Successes, Trials: t.Trials,
			Rate: t.Rate, Pass: t.Pass, MaxLogRatio: orNaN(t.MaxLogRatio), MaxLogLeak: orNaN(t.MaxLogLeak),
			MaxAbsLogit: t.MaxAbsLogit, MeanIterations: t.MeanIterations}
		if c.Method == MethodJL {
			d.Margin, d.MarginLo, d.MarginHi, d.CommonSuccesses = c.Margin, c.Margin, c.Margin, t.Successes
			if t.Margin != nil {
				d.Margin, d.MarginLo, d.MarginHi, d.CommonSuccesses = *t.Margin, orNaN(t.MarginLo), math.Inf(1), t.CommonSuccesses
				if t.MarginHi != nil {
					d.MarginHi = *t.MarginHi
				}
			}
		}
		sr.Tried = append(sr.Tried, d)
	}
	return CellResult{Cell: c, Search: sr, Seconds: rec.Seconds}, nil
}

// orNaN returns *p, or NaN for nil.
func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}
