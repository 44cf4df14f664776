package train

import (
	"encoding/json"
	"io"
	"path/filepath"

	"lipformer/internal/atomicfile"
	"lipformer/model"
	"lipformer/ngram"
)

// SummaryFile is the run summary in the output directory.
const SummaryFile = "summary.json"

// Summary is the outcome of a run, written to OUT/summary.json.
type Summary struct {
	Model        model.Config       `json:"model"`
	Options      Options            `json:"options"`
	Corpus       string             `json:"corpus"`
	Params       int                `json:"params"`
	Steps        int                `json:"steps"`         // steps completed
	Seconds      float64            `json:"seconds"`       // training time, summed over resumed sessions
	TokensPerS   float64            `json:"tokens_per_s"`  // of the last session
	FinalValBPC  float64            `json:"final_val_bpc"` // whole validation split, final weights
	BestValBPC   float64            `json:"best_val_bpc"`  // best periodic validation (eval-bytes); 0 if none ran
	BestStep     int                `json:"best_step"`     // -1 if no validation ran
	TestBPC      float64            `json:"test_bpc"`      // whole test split, final weights
	ValBytes     int                `json:"val_bytes"`
	TestBytes    int                `json:"test_bytes"`
	Baselines    []ngram.Result     `json:"baselines,omitempty"` // test-split bpc of n-gram models of the train split (BaselineOrders); absent without a test score
	Interrupted  bool               `json:"interrupted"`
	NonFinite    bool               `json:"non_finite"` // stopped at a non-finite loss or gradient
	Stability    StabilitySummary   `json:"stability"`
	EvalProtocol string             `json:"eval_protocol"`
	Certificate  *model.Certificate `json:"certificate,omitempty"` // certified Lipschitz constants of the final weights, with Run.Certify
}

// write saves the summary atomically in dir.
func (s *Summary) write(dir string) error {
	return atomicfile.Write(filepath.Join(dir, SummaryFile), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	})
}
