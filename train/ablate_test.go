package train

import (
	"context"
	"errors"
	"testing"

	"lipformer/model"
	"lipformer/spec"
)

// TestAblateAttention: L+2 rows in order; the intact row is exactly Evaluate's loss with a
// zero delta, each row is the loss of a program compiled with its layers' attention off,
// and the model is intact afterwards.
func TestAblateAttention(t *testing.T) {
	c := smallCorpus(t)
	tokens, err := c.Vocab.EncodeCompact(c.Valid)
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range []spec.Arch{spec.L2, spec.InvertibleDP} {
		m := smallModel(t, c, arch, spec.Float64, 3)
		rows, n, err := AblateAttention(context.Background(), m, tokens, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != m.Cfg.Layers+2 {
			t.Fatalf("%s: %d rows, want %d", arch, len(rows), m.Cfg.Layers+2)
		}
		if len(m.AttentionOff()) != 0 {
			t.Errorf("%s: the attention of %v is still off", arch, m.AttentionOff())
		}
		p, err := m.NewProgram(model.Eval, 3)
		if err != nil {
			t.Fatal(err)
		}
		intact, _, err := Evaluate(context.Background(), p, tokens)
		p.Close()
		if err != nil {
			t.Fatal(err)
		}
		if rows[0].Loss != intact {
			t.Errorf("%s: intact row %.15g nats, Evaluate %.15g", arch, rows[0].Loss, intact)
		}
		for i, r := range rows {
			want, wn := scoreWithout(t, m, r.Off, tokens)
			if r.Loss != want || n != wn {
				t.Errorf("%s: row %s: %.15g nats over %d bytes, a program with the attention of %v off %.15g over %d",
					arch, r.Layers, r.Loss, n, r.Off, want, wn)
			}
			if d := r.BPC - rows[0].BPC; r.Delta != d || (i == 0 && r.Delta != 0) {
				t.Errorf("%s: row %s: delta %g, want %g", arch, r.Layers, r.Delta, d)
			}
		}
		if names := [4]string{rows[0].Layers, rows[1].Layers, rows[2].Layers, rows[3].Layers}; names != [4]string{"none", "0", "1", "all"} {
			t.Errorf("%s: rows %v, want none, 0, 1, all", arch, names)
		}
		if rows[0].Off != nil || len(rows[3].Off) != 2 || rows[3].Delta == 0 {
			t.Errorf("%s: rows %+v", arch, rows)
		}
	}
}

// scoreWithout is Evaluate of a program of batch 3 compiled with the attention of off removed.
func scoreWithout(t *testing.T, m *model.Model, off []int, tokens []uint8) (float64, int) {
	t.Helper()
	restore, err := m.SetAttentionOff(off)
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.NewProgram(model.Eval, 3)
	restore()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	loss, n, err := Evaluate(context.Background(), p, tokens)
	if err != nil {
		t.Fatal(err)
	}
	return loss, n
}

func TestAblateAttentionStopsWhenCancelled(t *testing.T) {
	c := smallCorpus(t)
	tokens, err := c.Vocab.EncodeCompact(c.Valid)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m := smallModel(t, c, spec.DP, spec.Float32, 1)
	if _, _, err := AblateAttention(ctx, m, tokens, 4); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: error %v", err)
	}
	restore, err := m.SetAttentionOff([]int{0})
	if err != nil {
		t.Fatal(err)
	}
	defer restore()
	if _, _, err := AblateAttention(context.Background(), m, tokens, 4); err == nil {
		t.Error("a model with attention already off accepted")
	}
}
