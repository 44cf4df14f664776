package train

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"lipformer/internal/jsonfloat"
	"lipformer/model"
)

// MetricsFile is the name of the metrics log in a run's output directory.
const MetricsFile = "metrics.jsonl"

// TrainRow is one training-step line of the metrics log.
type TrainRow struct {
	Step       int
	Loss       float64 // mean cross-entropy, nats per byte
	LR         float64
	GradNorm   float64 // global gradient norm before clipping
	TokensPerS float64
	ElapsedS   float64 // seconds since the start of the run
}

// BPC returns the loss in bits per byte.
func (r TrainRow) BPC() float64 { return r.Loss / math.Ln2 }

// EvalRow is one evaluation line of the metrics log.
type EvalRow struct {
	Step     int
	ValLoss  float64 // mean cross-entropy over the validation split, nats per byte
	ElapsedS float64 // seconds since the start of the run
}

// ValBPC returns the validation loss in bits per byte.
func (r EvalRow) ValBPC() float64 { return r.ValLoss / math.Ln2 }

// Kinds of metrics lines, the value of their "kind" field.
const (
	KindTrain     = "train"
	KindEval      = "eval"
	KindLipschitz = "lipschitz"
)

// LipschitzRow is one line of attention bounds in the metrics log, after the update of
// step Step - 1.
type LipschitzRow struct {
	Step   int                `json:"step"`
	Layers []model.AttnReport `json:"layers"`
}

// lipschitzLine is the JSON form of a LipschitzRow.
type lipschitzLine struct {
	Kind string `json:"kind"`
	LipschitzRow
}

// trainLine is the JSON form of a TrainRow.
type trainLine struct {
	Kind       string          `json:"kind"`
	Step       int             `json:"step"`
	Loss       jsonfloat.Float `json:"loss"`
	BPC        jsonfloat.Float `json:"bpc"`
	LR         jsonfloat.Float `json:"lr"`
	GradNorm   jsonfloat.Float `json:"grad_norm"`
	TokensPerS jsonfloat.Float `json:"tokens_per_s"`
	ElapsedS   jsonfloat.Float `json:"elapsed_s"`
}

// evalLine is the JSON form of an EvalRow.
type evalLine struct {
	Kind     string          `json:"kind"`
	Step     int             `json:"step"`
	ValLoss  jsonfloat.Float `json:"val_loss"`
	ValBPC   jsonfloat.Float `json:"val_bpc"`
	ElapsedS jsonfloat.Float `json:"elapsed_s"`
}

// MetricsWriter appends metrics rows to a log, one JSON object per line:
//
//	{"kind":"train","step":..,"loss":..,"bpc":..,"lr":..,"grad_norm":..,"tokens_per_s":..,"elapsed_s":..}
//	{"kind":"eval","step":..,"val_loss":..,"val_bpc":..,"elapsed_s":..}
//	{"kind":"lipschitz","step":..,"layers":[{"name":"h0.attn","bound":..,"scale":..,...}]}
//
// Losses are in nats, bpc = loss/ln 2. Non-finite values are written as the
// strings "NaN", "+Inf" and "-Inf". Each line goes to the underlying writer
// in one Write call, followed by Flush when the writer has one, so a crash
// loses at most the line being written. A MetricsWriter is not safe for
// concurrent use.
type MetricsWriter struct {
	w      io.Writer
	closer io.Closer // the file OpenMetrics opened, or nil
}

// NewMetricsWriter returns a MetricsWriter writing to w.
func NewMetricsWriter(w io.Writer) *MetricsWriter {
	return &MetricsWriter{w: w}
}

// OpenMetrics opens outDir/metrics.jsonl for appending, creating the
// directory and the file as needed, so a resumed run continues the log.
func OpenMetrics(outDir string) (*MetricsWriter, error) {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(outDir, MetricsFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	return &MetricsWriter{w: f, closer: f}, nil
}

// WriteTrain appends a training row.
func (mw *MetricsWriter) WriteTrain(r TrainRow) error {
	return mw.writeLine(r.Step, trainLine{
		Kind: KindTrain, Step: r.Step, Loss: jsonfloat.Float(r.Loss), BPC: jsonfloat.Float(r.BPC()), LR: jsonfloat.Float(r.LR),
		GradNorm: jsonfloat.Float(r.GradNorm), TokensPerS: jsonfloat.Float(r.TokensPerS), ElapsedS: jsonfloat.Float(r.ElapsedS),
	})
}

// WriteEval appends an evaluation row.
func (mw *MetricsWriter) WriteEval(r EvalRow) error {
	return mw.writeLine(r.Step, evalLine{
		Kind: KindEval, Step: r.Step, ValLoss: jsonfloat.Float(r.ValLoss), ValBPC: jsonfloat.Float(r.ValBPC()),
		ElapsedS: jsonfloat.Float(r.ElapsedS),
	})
}

// WriteLipschitz appends a row of attention bounds.
func (mw *MetricsWriter) WriteLipschitz(r LipschitzRow) error {
	return mw.writeLine(r.Step, lipschitzLine{Kind: KindLipschitz, LipschitzRow: r})
}

// Close closes the file opened by OpenMetrics; for a MetricsWriter made by
// NewMetricsWriter it does nothing.
func (mw *MetricsWriter) Close() error {
	if mw.closer == nil {
		return nil
	}
	return mw.closer.Close()
}

// writeLine writes line as one JSON line and flushes it.
func (mw *MetricsWriter) writeLine(step int, line any) error {
	if step < 0 {
		return fmt.Errorf("metrics: step %d is negative", step)
	}
	b, err := json.Marshal(line)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	if _, err := mw.w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	if f, ok := mw.w.(interface{ Flush() error }); ok {
		if err := f.Flush(); err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
	}
	return nil
}

// Write writes the rows of m to w in the order a run logs them: the bounds and the
// evaluation after k steps follow the training row of step k-1, in that order.
func (m Metrics) Write(w io.Writer) error {
	mw := NewMetricsWriter(w)
	e, l := 0, 0
	for _, row := range m.Train {
		for ; l < len(m.Lipschitz) && m.Lipschitz[l].Step <= row.Step; l++ {
			if err := mw.WriteLipschitz(m.Lipschitz[l]); err != nil {
				return err
			}
		}
		for ; e < len(m.Eval) && m.Eval[e].Step <= row.Step; e++ {
			if err := mw.WriteEval(m.Eval[e]); err != nil {
				return err
			}
		}
		if err := mw.WriteTrain(row); err != nil {
			return err
		}
	}
	for ; l < len(m.Lipschitz); l++ {
		if err := mw.WriteLipschitz(m.Lipschitz[l]); err != nil {
			return err
		}
	}
	for ; e < len(m.Eval); e++ {
		if err := mw.WriteEval(m.Eval[e]); err != nil {
			return err
		}
	}
	return nil
}
