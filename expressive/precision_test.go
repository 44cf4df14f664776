package expressive

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// handTarget: row 0 = {0: 1, 2: 2}, row 1 = {1: 5}, row 2 = {0: 1, 1: 2, 2: 4}.
func handTarget() *Target {
	return &Target{L: 3, Rows: [][]Entry{
		{{Col: 0, Val: 1}, {Col: 2, Val: 2}},
		{{Col: 1, Val: 5}},
		{{Col: 0, Val: 1}, {Col: 1, Val: 2}, {Col: 2, Val: 4}},
	}}
}

// handAttention and the measures computed by hand:
//
//	row 0: M02/M00 = 0.5/0.4 = 1.25 against A02/A00 = 2: LogRatio = |log(1.25/2)| = log 1.6;
//	       leak 0.1/0.4 = 0.25.
//	row 1: one entry, LogRatio = 0; leak max(0.05, 0.05)/0.9 = 1/18.
//	row 2: M/A = 0.1, 0.15, 0.15: LogRatio = log 1.5; no off-support entry, LogLeak = -Inf.
func handAttention() *mat.Dense {
	return mat.NewDense(3, 3, []float64{
		0.4, 0.1, 0.5,
		0.05, 0.9, 0.05,
		0.1, 0.3, 0.6,
	})
}

func checkHandPrecision(t *testing.T, p Precision) {
	t.Helper()
	const tol = 1e-14
	want := []RowPrecision{
		{LogRatio: math.Log(1.6), LogLeak: math.Log(0.25)},
		{LogRatio: 0, LogLeak: math.Log(1.0 / 18)},
		{LogRatio: math.Log(1.5), LogLeak: math.Inf(-1)},
	}
	for i, w := range want {
		r := p.Rows[i]
		if math.Abs(r.LogRatio-w.LogRatio) > tol {
			t.Errorf("row %d LogRatio %v, want %v", i, r.LogRatio, w.LogRatio)
		}
		if !(math.IsInf(w.LogLeak, -1) && math.IsInf(r.LogLeak, -1)) && math.Abs(r.LogLeak-w.LogLeak) > tol {
			t.Errorf("row %d LogLeak %v, want %v", i, r.LogLeak, w.LogLeak)
		}
	}
	if r := p.Rows[2]; math.Abs(r.RatioErr()-0.5) > tol || r.Leak() != 0 {
		t.Errorf("row 2 RatioErr %v Leak %v, want 0.5 and 0", r.RatioErr(), r.Leak())
	}
	if r := p.Rows[1]; math.Abs(r.Leak()-1.0/18) > tol {
		t.Errorf("row 1 Leak %v, want 1/18", r.Leak())
	}
	if math.Abs(p.RatioErr()-0.6) > tol || math.Abs(p.Leak()-0.25) > tol {
		t.Errorf("matrix RatioErr %v Leak %v, want 0.6 and 0.25", p.RatioErr(), p.Leak())
	}
	if !p.Success(0.61) || p.Success(0.59) || p.Success(0.24) {
		t.Errorf("Success thresholds wrong for RatioErr 0.6, Leak 0.25")
	}
}

func TestMeasureHand(t *testing.T) {
	p, err := Measure(handAttention(), handTarget())
	if err != nil {
		t.Fatal(err)
	}
	checkHandPrecision(t, p)
}

// The logits log M + c_i (any row constants) give the same measures.
func TestMeasureLogitsHand(t *testing.T) {
	m := handAttention()
	z := mat.NewDense(3, 3, nil)
	for i := range 3 {
		for j := range 3 {
			z.Set(i, j, math.Log(m.At(i, j))+float64(7*i-3))
		}
	}
	p, err := MeasureLogits(z, handTarget())
	if err != nil {
		t.Fatal(err)
	}
	checkHandPrecision(t, p)
}

func TestMeasureZeroOnSupport(t *testing.T) {
	m := handAttention()
	m.Set(0, 0, 0)
	p, err := Measure(m, handTarget())
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(p.Rows[0].LogRatio, 1) || !math.IsInf(p.Rows[0].LogLeak, 1) || p.Success(0.5) {
		t.Fatalf("zero on-support weight: row 0 = %+v, want +Inf measures and failure", p.Rows[0])
	}
}

func TestMeasureErrors(t *testing.T) {
	tg := handTarget()
	if _, err := Measure(mat.NewDense(2, 3, nil), tg); err == nil {
		t.Error("2 x 3 attention matrix gave no error")
	}
	neg := handAttention()
	neg.Set(1, 1, -0.1)
	if _, err := Measure(neg, tg); err == nil {
		t.Error("negative attention weight gave no error")
	}
	z := handAttention()
	z.Set(2, 0, math.NaN())
	if _, err := MeasureLogits(z, tg); err == nil {
		t.Error("NaN logit gave no error")
	}
	if _, err := MeasureLogits(handAttention(), &Target{L: 3}); err == nil {
		t.Error("target without rows gave no error")
	}
}
