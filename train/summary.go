package train

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"

	"lipformer/internal/atomicfile"
	"lipformer/internal/jsonfloat"
	"lipformer/model"
	"lipformer/ngram"
)

// SummaryFile is the run summary in the output directory.
const SummaryFile = "summary.json"

// Figure is a measured number of a run summary, NaN when it was not measured (the final
// scores of an interrupted or diverged run, say). In JSON a NaN is null, and null or an
// absent field reads back as NaN; the infinities are the strings "+Inf" and "-Inf".
type Figure float64

// NotMeasured is the Figure of a number that was not measured.
func NotMeasured() Figure { return Figure(math.NaN()) }

// Measured reports whether f holds a measurement.
func (f Figure) Measured() bool { return !math.IsNaN(float64(f)) }

// MarshalJSON writes f as a number, null when it was not measured, or "+Inf" or "-Inf".
func (f Figure) MarshalJSON() ([]byte, error) {
	if !f.Measured() {
		return []byte("null"), nil
	}
	return jsonfloat.Float(f).MarshalJSON()
}

// UnmarshalJSON reads what MarshalJSON writes (and "NaN", as not measured).
func (f *Figure) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = NotMeasured()
		return nil
	}
	var x jsonfloat.Float
	if err := x.UnmarshalJSON(b); err != nil {
		return err
	}
	*f = Figure(x)
	return nil
}

// Summary is the outcome of a run, written to OUT/summary.json. The Figures that a run
// did not measure are NaN, null in the file: the final scores of an interrupted run or of
// one stopped at a non-finite value, the best validation when none was finite, the speed
// of a session that ran no step.
type Summary struct {
	Model        model.Config       `json:"model"`
	Options      Options            `json:"options"`
	Corpus       string             `json:"corpus"`
	CorpusID     CorpusID           `json:"corpus_id"` // the text trained on and where it was, in the last session
	Params       int                `json:"params"`
	Steps        int                `json:"steps"`                // steps completed
	Seconds      float64            `json:"seconds"`              // training time, summed over resumed sessions
	TokensPerS   Figure             `json:"tokens_per_s"`         // of the last session
	FinalValBPC  Figure             `json:"final_val_bpc"`        // whole validation split, final weights
	BestValBPC   Figure             `json:"best_val_bpc"`         // best finite periodic validation (eval-bytes)
	BestStep     int                `json:"best_step"`            // -1 if no finite validation ran
	TestBPC      Figure             `json:"test_bpc"`             // whole test split, final weights
	FinalValAcc  Figure             `json:"final_val_acc"`        // next-byte top-1 accuracy on the whole validation split
	TestAcc      Figure             `json:"test_acc"`             // next-byte top-1 accuracy on the whole test split
	ValBytes     int                `json:"val_bytes,omitempty"`  // bytes scored for FinalValBPC
	TestBytes    int                `json:"test_bytes,omitempty"` // bytes scored for TestBPC
	Baselines    []ngram.Result     `json:"baselines,omitempty"`  // test-split bpc of n-gram models of the train split (BaselineOrders); absent without a test score
	Interrupted  bool               `json:"interrupted"`
	NonFinite    bool               `json:"non_finite"` // stopped at a non-finite loss, gradient, validation loss or weight
	Stability    StabilitySummary   `json:"stability"`
	EvalProtocol string             `json:"eval_protocol"`
	Certificate  *model.Certificate `json:"certificate,omitempty"` // certified Lipschitz constants of the final weights, with Run.Certify or Model.LipK
}

// UnmarshalJSON reads a summary; a Figure absent from b is NaN, not measured.
func (s *Summary) UnmarshalJSON(b []byte) error {
	type plain Summary // without this method
	nan := NotMeasured()
	p := plain{TokensPerS: nan, FinalValBPC: nan, BestValBPC: nan, TestBPC: nan, FinalValAcc: nan, TestAcc: nan, BestStep: -1}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*s = Summary(p)
	return nil
}

// write saves the summary atomically in dir.
func (s *Summary) write(dir string) error {
	return atomicfile.Write(filepath.Join(dir, SummaryFile), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(s); err != nil {
			return fmt.Errorf("summary: %w", err)
		}
		return nil
	})
}
