package train

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"lipformer/internal/jsonfloat"
)

// Metrics holds the rows of a metrics log, each kind in file order.
type Metrics struct {
	Train     []TrainRow
	Eval      []EvalRow
	Lipschitz []LipschitzRow
}

// metricsLine is any metrics line as decoded; a nil field was missing. The
// bpc fields are derived from the losses and not read back.
type metricsLine struct {
	Kind       *string          `json:"kind"`
	Step       *int             `json:"step"`
	Loss       *jsonfloat.Float `json:"loss"`
	LR         *jsonfloat.Float `json:"lr"`
	GradNorm   *jsonfloat.Float `json:"grad_norm"`
	TokensPerS *jsonfloat.Float `json:"tokens_per_s"`
	ElapsedS   *jsonfloat.Float `json:"elapsed_s"`
	ValLoss    *jsonfloat.Float `json:"val_loss"`
}

// maxMetricsLine bounds the length of one line of a metrics log.
const maxMetricsLine = 1 << 20

// ReadMetrics reads a metrics log written by MetricsWriter. Blank lines are
// skipped; any other line that is not a complete train or eval row is an
// error naming the file and line number.
func ReadMetrics(path string) (Metrics, error) {
	f, err := os.Open(path)
	if err != nil {
		return Metrics{}, err
	}
	defer f.Close()
	var m Metrics
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, maxMetricsLine)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if err := m.add(line); err != nil {
			return Metrics{}, fmt.Errorf("%s line %d: %w", path, lineNo, err)
		}
	}
	if err := sc.Err(); err != nil {
		return Metrics{}, fmt.Errorf("%s line %d: %w", path, lineNo+1, err)
	}
	return m, nil
}

// add decodes one line and appends it to the rows of its kind.
func (m *Metrics) add(raw []byte) error {
	var l metricsLine
	if err := json.Unmarshal(raw, &l); err != nil {
		return err
	}
	if l.Kind == nil {
		return errors.New(`no "kind"`)
	}
	switch *l.Kind {
	case KindTrain:
		if err := missing(*l.Kind, l.Step, []string{"loss", "lr", "grad_norm", "tokens_per_s", "elapsed_s"},
			l.Loss, l.LR, l.GradNorm, l.TokensPerS, l.ElapsedS); err != nil {
			return err
		}
		m.Train = append(m.Train, TrainRow{Step: *l.Step, Loss: float64(*l.Loss), LR: float64(*l.LR),
			GradNorm: float64(*l.GradNorm), TokensPerS: float64(*l.TokensPerS), ElapsedS: float64(*l.ElapsedS)})
	case KindEval:
		if err := missing(*l.Kind, l.Step, []string{"val_loss", "elapsed_s"}, l.ValLoss, l.ElapsedS); err != nil {
			return err
		}
		m.Eval = append(m.Eval, EvalRow{Step: *l.Step, ValLoss: float64(*l.ValLoss), ElapsedS: float64(*l.ElapsedS)})
	case KindLipschitz:
		var r LipschitzRow
		if err := json.Unmarshal(raw, &r); err != nil {
			return err
		}
		if l.Step == nil || r.Step < 0 {
			return fmt.Errorf(`%s row has no "step" or a negative one`, *l.Kind)
		}
		m.Lipschitz = append(m.Lipschitz, r)
	default:
		return fmt.Errorf("unknown kind %q (want %q, %q or %q)", *l.Kind, KindTrain, KindEval, KindLipschitz)
	}
	return nil
}

// missing reports a negative step or the first required field of a kind row
// that is absent.
func missing(kind string, step *int, names []string, fields ...*jsonfloat.Float) error {
	if step == nil {
		return fmt.Errorf(`%s row has no "step"`, kind)
	}
	if *step < 0 {
		return fmt.Errorf("%s row has negative step %d", kind, *step)
	}
	for i, f := range fields {
		if f == nil {
			return fmt.Errorf("%s row has no %q", kind, names[i])
		}
	}
	return nil
}
