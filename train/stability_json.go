package train

import (
	"encoding/json"

	"lipformer/internal/jsonfloat"
)

// stabilityJSON is the JSON form of a StabilitySummary; its floats may be
// non-finite (a diverged run's final loss is NaN).
type stabilityJSON struct {
	Steps              int             `json:"steps"`
	NonFiniteSteps     int             `json:"nonfinite_steps"`
	FirstNonFiniteStep int             `json:"first_nonfinite_step"`
	LossSpikes         int             `json:"loss_spikes"`
	FirstSpikeStep     int             `json:"first_spike_step"`
	MaxGradNorm        jsonfloat.Float `json:"max_grad_norm"`
	MaxGradNormStep    int             `json:"max_grad_norm_step"`
	InitialLoss        jsonfloat.Float `json:"initial_loss"`
	FinalLoss          jsonfloat.Float `json:"final_loss"`
	Diverged           bool            `json:"diverged"`
	SpikeFactor        jsonfloat.Float `json:"spike_factor"`
	SpikeWindow        int             `json:"spike_window"`
}

// MarshalJSON writes the summary with snake_case keys; non-finite losses are
// written as the strings "NaN", "+Inf" or "-Inf".
func (s StabilitySummary) MarshalJSON() ([]byte, error) {
	return json.Marshal(stabilityJSON{
		Steps: s.Steps, NonFiniteSteps: s.NonFiniteSteps, FirstNonFiniteStep: s.FirstNonFiniteStep,
		LossSpikes: s.LossSpikes, FirstSpikeStep: s.FirstSpikeStep,
		MaxGradNorm: jsonfloat.Float(s.MaxGradNorm), MaxGradNormStep: s.MaxGradNormStep,
		InitialLoss: jsonfloat.Float(s.InitialLoss), FinalLoss: jsonfloat.Float(s.FinalLoss), Diverged: s.Diverged,
		SpikeFactor: jsonfloat.Float(s.SpikeFactor), SpikeWindow: s.SpikeWindow,
	})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *StabilitySummary) UnmarshalJSON(b []byte) error {
	var j stabilityJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = StabilitySummary{
		Steps: j.Steps, NonFiniteSteps: j.NonFiniteSteps, FirstNonFiniteStep: j.FirstNonFiniteStep,
		LossSpikes: j.LossSpikes, FirstSpikeStep: j.FirstSpikeStep,
		MaxGradNorm: float64(j.MaxGradNorm), MaxGradNormStep: j.MaxGradNormStep,
		InitialLoss: float64(j.InitialLoss), FinalLoss: float64(j.FinalLoss), Diverged: j.Diverged,
		SpikeFactor: float64(j.SpikeFactor), SpikeWindow: j.SpikeWindow,
	}
	return nil
}
