package train

import (
	"context"
	"fmt"
	"strconv"

	"lipformer/data"
	"lipformer/model"
)

// AblationRow is one line of an attention ablation: the score of a split with the attention
// sub-blocks of some layers removed (model.Model.SetAttentionOff).
type AblationRow struct {
	Layers string  `json:"layers"` // "none" (the intact model), a layer index, or "all"
	Off    []int   `json:"-"`      // the layers removed
	Loss   float64 `json:"loss"`   // nats per scored byte
	BPC    float64 `json:"bpc"`
	Delta  float64 `json:"delta"` // BPC minus the intact model's
}

// AblateAttention scores tokens as Evaluate does, with evaluation programs of batch
// windows, L+2 times for a model of L layers: intact, without the attention of each layer
// in turn, and without all of it. It returns the rows in that order and the number of
// bytes each scored. ctx is checked between evaluations and their batches. The model's
// attention is intact again when it returns.
func AblateAttention[T data.Token](ctx context.Context, m *model.Model, tokens []T, batch int) ([]AblationRow, int, error) {
	if off := m.AttentionOff(); len(off) > 0 {
		return nil, 0, fmt.Errorf("ablation: the attention of layers %v is already off", off)
	}
	all := make([]int, m.Cfg.Layers)
	rows := []AblationRow{{Layers: "none"}}
	for l := range all {
		all[l] = l
		rows = append(rows, AblationRow{Layers: strconv.Itoa(l), Off: []int{l}})
	}
	rows = append(rows, AblationRow{Layers: "all", Off: all})
	var scored int
	for i := range rows {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		loss, n, err := evaluateWithout(ctx, m, rows[i].Off, tokens, batch)
		if err != nil {
			return nil, 0, fmt.Errorf("ablation of the attention of layers %s: %w", rows[i].Layers, err)
		}
		rows[i].Loss, rows[i].BPC = loss, BPC(loss)
		rows[i].Delta = rows[i].BPC - rows[0].BPC
		scored = n
	}
	return rows, scored, nil
}

// evaluateWithout is Evaluate of a new evaluation program of m with the attention of the
// layers off removed.
func evaluateWithout[T data.Token](ctx context.Context, m *model.Model, off []int, tokens []T, batch int) (float64, int, error) {
	restore, err := m.SetAttentionOff(off)
	if err != nil {
		return 0, 0, err
	}
	p, err := m.NewProgram(model.Eval, batch)
	restore()
	if err != nil {
		return 0, 0, err
	}
	defer p.Close()
	return Evaluate(ctx, p, tokens)
}
