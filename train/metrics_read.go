package train

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// ErrTornRow is wrapped by the error of ReadMetrics when the last line of a log is not a
// complete row and has no newline at its end: a write was cut short (a full disk, a
// crash). RepairMetrics removes such a row; resuming the run does that itself.
var ErrTornRow = errors.New("torn last row (a write was cut short before its newline; resuming the run truncates it)")

// ReadMetrics reads a metrics log written by MetricsWriter. Blank lines are
// skipped; any other line that is not a complete train or eval row is an
// error naming the file and line number, which wraps ErrTornRow when it is the
// last line and has no newline.
func ReadMetrics(path string) (Metrics, error) {
	f, err := os.Open(path)
	if err != nil {
		return Metrics{}, err
	}
	defer f.Close()
	var m Metrics
	br := bufio.NewReader(f)
	var buf []byte
	for lineNo := 1; ; lineNo++ {
		raw, ended, err := nextLine(br, buf[:0])
		if err == io.EOF {
			return m, nil
		}
		if err != nil {
			return Metrics{}, fmt.Errorf("%s line %d: %w", path, lineNo, err)
		}
		buf = raw
		line := bytes.TrimSpace(raw)
		if len(line) == 0 {
			continue
		}
		if err := m.add(line); err != nil {
			if !ended {
				return Metrics{}, fmt.Errorf("%s line %d: %w: %w", path, lineNo, ErrTornRow, err)
			}
			return Metrics{}, fmt.Errorf("%s line %d: %w", path, lineNo, err)
		}
	}
}

// nextLine appends the next line of br, without its newline, to buf and returns it with
// whether a newline ended it; after the last line it returns io.EOF.
func nextLine(br *bufio.Reader, buf []byte) ([]byte, bool, error) {
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > maxMetricsLine {
			return nil, false, fmt.Errorf("line longer than %d bytes", maxMetricsLine)
		}
		switch {
		case err == nil:
			return buf[:len(buf)-1], true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && len(buf) > 0:
			return buf, false, nil
		default:
			return nil, false, err
		}
	}
}

// RepairMetrics truncates the metrics log at path after its last newline, which removes a
// torn last row: the part of a row that a write cut short (a full disk, a crash) left
// without its newline. It returns the number of bytes removed, 0 when the log is empty or
// ends in a newline. Only the end of the log is looked at: ReadMetrics still refuses a bad
// row anywhere else.
func RepairMetrics(path string) (int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := fi.Size()
	keep := int64(0) // the length of the log up to its last newline
	chunk := make([]byte, 64<<10)
	for end := size; end > 0 && keep == 0; {
		start := max(end-int64(len(chunk)), 0)
		b := chunk[:end-start]
		if n, err := f.ReadAt(b, start); err != nil && !(err == io.EOF && n == len(b)) {
			return 0, fmt.Errorf("repair %s: %w", path, err)
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			keep = start + int64(i) + 1
		}
		end = start
	}
	if keep == size {
		return 0, nil
	}
	if err := f.Truncate(keep); err != nil {
		return 0, fmt.Errorf("repair %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("repair %s: %w", path, err)
	}
	return size - keep, f.Close()
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
