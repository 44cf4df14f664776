package flow

import (
	"fmt"
	"math/rand/v2"

	"lipformer/model"
)

// Embed returns the input of a model's first block for token windows ids (B*T ids,
// row-major (B, T), T the context): token embedding (of each token and the ones before it,
// with n-byte tokens) plus position embedding, as the model's graphs compute it, (B*T*D)
// values.
func Embed(m *model.Model, ids []int) ([]float64, error) {
	t, d := m.Cfg.Context, m.Cfg.Width
	if len(ids) == 0 || len(ids)%t != 0 {
		return nil, fmt.Errorf("flow: %d token ids, want a positive multiple of the context %d", len(ids), t)
	}
	tok, pos := m.Tok.Rows(), m.Pos.W.Float64s()
	x := make([]float64, len(ids)*d)
	for r, id := range ids {
		if id < 0 || id >= m.Cfg.Vocab {
			return nil, fmt.Errorf("flow: token id %d at %d, want 0..%d", id, r, m.Cfg.Vocab-1)
		}
		w := r / t * t
		row := m.Cfg.TokenRow(ids[w:w+t], r-w)
		for k := range d {
			x[r*d+k] = tok[row*d+k] + pos[(r%t)*d+k]
		}
	}
	return x, nil
}

// Adversarial returns B sequences of T tokens of width D built as in docs/math.md, "Attention": the
// last token is 0 and token j < T-1 is spread * t_j * w, with t_j ~ N(0, 1) and, for each
// sequence, a direction w of N(0, 1) entries (so that entries have the scale of Random's
// at the same spread), drawn from seed. Under dp attention the last token's
// logits are then all 0 and its attention row uniform, and the Jacobian of its output in
// its own input holds the term spread^2 Var(t) sum_h A_h w^T w W^{V,h} W^{O,h}
// (A_h = W^{Q,h} W^{K,h}^T / sqrt(d)), which grows without bound for a generic w.
func Adversarial(batch, seqLen, width int, spread float64, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 0xad7e))
	x := make([]float64, batch*seqLen*width)
	for b := range batch {
		w := make([]float64, width)
		for k := range w {
			w[k] = rng.NormFloat64()
		}
		for j := range seqLen - 1 {
			t := spread * rng.NormFloat64()
			for k := range w {
				x[(b*seqLen+j)*width+k] = t * w[k]
			}
		}
	}
	return x
}

// Random returns B*T*D entries spread * N(0, 1) drawn from seed.
func Random(batch, seqLen, width int, spread float64, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 0x7a4d))
	x := make([]float64, batch*seqLen*width)
	for i := range x {
		x[i] = spread * rng.NormFloat64()
	}
	return x
}
