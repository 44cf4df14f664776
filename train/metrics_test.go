package train

import (
	"bufio"
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sameFloat compares floats bit for bit, so NaN equals NaN.
func sameFloat(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

func TestMetricsLineFormat(t *testing.T) {
	var buf bytes.Buffer
	mw := NewMetricsWriter(&buf)
	if err := mw.WriteTrain(TrainRow{Step: 10, Loss: 2 * math.Ln2, LR: 3e-4, GradNorm: 0.5, TokensPerS: 12000, ElapsedS: 1.5}); err != nil {
		t.Fatal(err)
	}
	if err := mw.WriteEval(EvalRow{Step: 20, ValLoss: math.Ln2 / 2, ElapsedS: 30}); err != nil {
		t.Fatal(err)
	}
	if err := mw.WriteTrain(TrainRow{Step: 21, Loss: math.NaN(), LR: 1, GradNorm: math.Inf(1), TokensPerS: 0, ElapsedS: math.Inf(-1)}); err != nil {
		t.Fatal(err)
	}
	want := `{"kind":"train","step":10,"loss":1.3862943611198906,"bpc":2,"lr":0.0003,"grad_norm":0.5,"tokens_per_s":12000,"elapsed_s":1.5}
{"kind":"eval","step":20,"val_loss":0.34657359027997264,"val_bpc":0.5,"elapsed_s":30}
{"kind":"train","step":21,"loss":"NaN","bpc":"NaN","lr":1,"grad_norm":"+Inf","tokens_per_s":0,"elapsed_s":"-Inf"}
`
	if buf.String() != want {
		t.Fatalf("metrics log:\n%s\nwant:\n%s", buf.String(), want)
	}
}

func TestMetricsRoundTripAndAppend(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	train := []TrainRow{
		{Step: 0, Loss: 5.5, LR: 1e-5, GradNorm: 3.25, TokensPerS: 1e4, ElapsedS: 0.1},
		{Step: 1, Loss: math.NaN(), LR: 2e-5, GradNorm: math.Inf(1), TokensPerS: 9e3, ElapsedS: 0.2},
		{Step: 2, Loss: 1.0 / 3, LR: 3e-5, GradNorm: 1e-300, TokensPerS: 8e3, ElapsedS: 0.3},
	}
	eval := []EvalRow{{Step: 1, ValLoss: 0.7, ElapsedS: 0.25}, {Step: 2, ValLoss: math.Inf(1), ElapsedS: 0.35}}
	// Two sessions: the second open appends, as a resumed run does.
	sessions := []func(mw *MetricsWriter) error{
		func(mw *MetricsWriter) error {
			return errors.Join(mw.WriteTrain(train[0]), mw.WriteTrain(train[1]), mw.WriteEval(eval[0]))
		},
		func(mw *MetricsWriter) error { return errors.Join(mw.WriteTrain(train[2]), mw.WriteEval(eval[1])) },
	}
	for _, session := range sessions {
		mw, err := OpenMetrics(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(session(mw), mw.Close()); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ReadMetrics(filepath.Join(dir, MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Train) != len(train) || len(got.Eval) != len(eval) {
		t.Fatalf("read %d train and %d eval rows, want %d and %d", len(got.Train), len(got.Eval), len(train), len(eval))
	}
	for i, w := range train {
		g := got.Train[i]
		if g.Step != w.Step || !sameFloat(g.Loss, w.Loss) || !sameFloat(g.LR, w.LR) || !sameFloat(g.GradNorm, w.GradNorm) ||
			!sameFloat(g.TokensPerS, w.TokensPerS) || !sameFloat(g.ElapsedS, w.ElapsedS) {
			t.Errorf("train row %d: %+v, want %+v", i, g, w)
		}
	}
	for i, w := range eval {
		g := got.Eval[i]
		if g.Step != w.Step || !sameFloat(g.ValLoss, w.ValLoss) || !sameFloat(g.ElapsedS, w.ElapsedS) {
			t.Errorf("eval row %d: %+v, want %+v", i, g, w)
		}
	}
}

func TestMetricsWriterFlushesEachLine(t *testing.T) {
	var sink bytes.Buffer
	bw := bufio.NewWriter(&sink)
	mw := NewMetricsWriter(bw)
	if err := mw.WriteEval(EvalRow{Step: 1, ValLoss: 1, ElapsedS: 1}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(sink.String(), "\n") || bw.Buffered() != 0 {
		t.Fatalf("line not flushed: %d bytes reached the sink, %d buffered", sink.Len(), bw.Buffered())
	}
}

func TestMetricsWriterRejectsNegativeStep(t *testing.T) {
	var buf bytes.Buffer
	err := NewMetricsWriter(&buf).WriteTrain(TrainRow{Step: -1})
	if err == nil || !strings.Contains(err.Error(), "step -1") || buf.Len() != 0 {
		t.Fatalf("error %v and %d bytes written, want an error naming the step and nothing written", err, buf.Len())
	}
}

func TestReadMetricsNamesBadLine(t *testing.T) {
	good := `{"kind":"train","step":1,"loss":1,"bpc":1.4,"lr":1,"grad_norm":1,"tokens_per_s":1,"elapsed_s":1}`
	tests := []struct {
		name string
		line string
		want string
	}{
		{"truncated", `{"kind":"train","step":2,"loss":`, "line 3"},
		{"not JSON", `loss=1`, "line 3"},
		{"no kind", `{"step":1}`, `line 3: no "kind"`},
		{"unknown kind", `{"kind":"test","step":1}`, `line 3: unknown kind "test"`},
		{"missing field", `{"kind":"train","step":1,"loss":1,"lr":1,"tokens_per_s":1,"elapsed_s":1}`, `line 3: train row has no "grad_norm"`},
		{"missing step", `{"kind":"eval","val_loss":1,"elapsed_s":1}`, `line 3: eval row has no "step"`},
		{"negative step", `{"kind":"eval","step":-2,"val_loss":1,"elapsed_s":1}`, "line 3: eval row has negative step -2"},
		{"bad float string", `{"kind":"eval","step":1,"val_loss":"nan","elapsed_s":1}`, `line 3: "nan" is not a number`},
		{"wrong type", `{"kind":"eval","step":1,"val_loss":true,"elapsed_s":1}`, "line 3: true is not a number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), MetricsFile)
			if err := os.WriteFile(path, []byte(good+"\n\n"+tt.line+"\n"+good+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadMetrics(path)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("error %v, want one naming %s and mentioning %q", err, path, tt.want)
			}
		})
	}
}
