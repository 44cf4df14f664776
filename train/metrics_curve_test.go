package train

import (
	"math"
	"reflect"
	"testing"
)

// trainRows returns training rows at steps 0.. with the given losses (nats), gradient
// norms 10*step and elapsed seconds step+1.
func trainRows(losses ...float64) []TrainRow {
	rows := make([]TrainRow, len(losses))
	for i, l := range losses {
		rows[i] = TrainRow{Step: i, Loss: l, LR: 1e-3, GradNorm: 10 * float64(i), ElapsedS: float64(i + 1)}
	}
	return rows
}

func mustMetric(t *testing.T, name string) Quantity {
	t.Helper()
	m, err := QuantityNamed(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestExtractTrainLossAgainstStepsAndTokens(t *testing.T) {
	m := Metrics{Train: trainRows(4, 3, 2, 1)}
	got := m.Curve(Query{Quantity: mustMetric(t, "train_loss"), Axis: AxisStep, Smooth: 1})
	want := Curve{X: []float64{0, 1, 2, 3}, Y: []float64{4, 3, 2, 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("train_loss by step: %+v, want %+v", got, want)
	}
	got = m.Curve(Query{Quantity: mustMetric(t, "train_loss"), Axis: AxisTokens, TokensPerStep: 2 * 64, Smooth: 2})
	want = Curve{X: []float64{0, 128, 256, 384}, Y: []float64{4, 3.5, 2.5, 1.5}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("train_loss by tokens, smoothed over 2: %+v, want %+v", got, want)
	}
	got = m.Curve(Query{Quantity: mustMetric(t, "train_bpc"), Axis: AxisTime, Smooth: 1})
	if !reflect.DeepEqual(got.X, []float64{1, 2, 3, 4}) || math.Abs(got.Y[0]-4/math.Ln2) > 1e-12 {
		t.Errorf("train_bpc by time: %+v, want x 1..4 and y[0] = 4/ln 2", got)
	}
}

func TestExtractKeepsTheFinitePartOfADivergedRun(t *testing.T) {
	nan := math.NaN()
	m := Metrics{Train: trainRows(6, 3, 9, nan),
		Eval: []EvalRow{{Step: 2, ValLoss: 5, ElapsedS: 2.5}, {Step: 4, ValLoss: math.Inf(1), ElapsedS: 4.5}}}
	got := m.Curve(Query{Quantity: mustMetric(t, "train_loss"), Axis: AxisStep, Smooth: 3})
	want := Curve{X: []float64{0, 1, 2}, Y: []float64{6, 4.5, 6}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("smoothed loss of a diverged run: %+v, want %+v", got, want)
	}
	got = m.Curve(Query{Quantity: mustMetric(t, "val_loss"), Axis: AxisStep, Smooth: 1})
	if want := (Curve{X: []float64{2}, Y: []float64{5}}); !reflect.DeepEqual(got, want) {
		t.Errorf("val_loss of a diverged run: %+v, want %+v", got, want)
	}
	if step := m.FirstNonFinite(); step != 3 {
		t.Errorf("first non-finite step %d, want 3", step)
	}
	if step := (Metrics{Train: trainRows(1, 2)}).FirstNonFinite(); step != -1 {
		t.Errorf("first non-finite step of a finite run %d, want -1", step)
	}
}

func TestMovingAverage(t *testing.T) {
	got := movingAverage([]float64{1, 2, 3, 4, 5, 6}, 3)
	want := []float64{1, 1.5, 2, 3, 4, 5}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("moving average over 3: %v, want %v", got, want)
	}
	huge := []float64{1.8, 16.5, 2e23, 6e21, 18.5, 14.5}
	if got := movingAverage(huge, 1); !reflect.DeepEqual(got, huge) {
		t.Errorf("moving average over 1: %v, want the values", got)
	}
	if got := movingAverage(huge, 2); got[4] != (6e21+18.5)/2 || got[5] != 16.5 {
		t.Errorf("moving average over 2 after huge values: %v, want ... 3e21, 16.5", got)
	}
}
