package model

import (
	"fmt"
	"math"

	"lipformer/layers"
	"lipformer/ops"
)

// Decoder computes the model incrementally, one position after another, with a key/value
// cache: Prefill runs a prompt at positions 0.., each Step one more token at the next
// position, and both return the logits of the next byte, the same (up to rounding) as the
// Sample program's row at that position. Per layer and head it caches what later positions
// attend to: the packed projection [q | k | v] of every position (tied L2: [q | v], the
// keys being the queries x_j W^Q, the values x_j A W^V), and for L2 the keys' squared
// norms.
//
// The decoder holds a copy of the weights the model applies, those computed from its
// parameters (tied L2 value maps, spectral normalisations, the contractive scale)
// evaluated once by the model's own ops: make a new decoder after the parameters change.
// It computes in the model's dtype (float32 for use, float64 for tests) with the ops'
// kernels (ops.Gemm, ops.Gemv for single rows, ops.LayerNormRows, ...). Positions are
// absolute and at most the context T: when the cache is full, start again with Prefill
// (Generate's windows do). A Decoder is not safe for concurrent use.
type Decoder struct {
	net decoderNet
}

// decoderNet is the decoder in one element type.
type decoderNet interface {
	// run computes tokens at positions pos.. (caching them) and returns the logits (V)
	// of the last.
	run(tokens []int, pos int) []float64
	config() Config
	cached() int
	setCached(n int)
}

// NewDecoder makes a decoder of the model's current weights, with an empty cache.
func (m *Model) NewDecoder() (*Decoder, error) {
	var net decoderNet
	var err error
	switch m.Cfg.Dtype {
	case "float32":
		net, err = newDecoder[float32](m)
	case "float64":
		net, err = newDecoder[float64](m)
	default:
		err = fmt.Errorf("decoder: dtype %q, want float32 or float64", m.Cfg.Dtype)
	}
	if err != nil {
		return nil, err
	}
	return &Decoder{net: net}, nil
}

// Context is T, the most positions the decoder caches.
func (d *Decoder) Context() int { return d.net.config().Context }

// Len is the number of positions cached.
func (d *Decoder) Len() int { return d.net.cached() }

// Reset empties the cache.
func (d *Decoder) Reset() { d.net.setCached(0) }

// Prefill empties the cache, runs tokens (1..T ids) at positions 0.. and returns the logits
// of the byte after the last.
func (d *Decoder) Prefill(tokens []int) ([]float64, error) {
	if t := d.Context(); len(tokens) == 0 || len(tokens) > t {
		return nil, fmt.Errorf("decoder: prefill of %d tokens, want 1..%d (the context)", len(tokens), t)
	}
	if err := d.check(tokens); err != nil {
		return nil, err
	}
	d.Reset()
	return d.net.run(tokens, 0), nil
}

// Step runs one more token at the next position and returns the logits of the byte after
// it. It fails when the cache is full (Len() == Context()).
func (d *Decoder) Step(token int) ([]float64, error) {
	n := d.Len()
	if n == d.Context() {
		return nil, fmt.Errorf("decoder: the cache holds the whole context of %d positions: prefill a shorter window", n)
	}
	if n == 0 {
		return nil, fmt.Errorf("decoder: step on an empty cache: prefill first")
	}
	tokens := []int{token}
	if err := d.check(tokens); err != nil {
		return nil, err
	}
	return d.net.run(tokens, n), nil
}

// check returns an error naming the first token id outside the vocabulary.
func (d *Decoder) check(tokens []int) error {
	v := d.net.config().Vocab
	for i, id := range tokens {
		if id < 0 || id >= v {
			return fmt.Errorf("decoder: token %d at %d is not in the vocabulary of %d (ids 0..%d)", id, i, v, v-1)
		}
	}
	return nil
}

// decoder is the Decoder in the element type T.
type decoder[T ops.Float] struct {
	cfg    Config
	norm   layers.Norm
	heads  int // H
	width  int // D
	hd     int // head width d = D/H
	hidden int // F
	tok    []T // (V, D)
	pos    []T // (T, D)
	blocks []blockWeights[T]
	caches []blockCache[T]
	lnf    *lnWeights[T]
	out    []T // (D, V), or nil: the head is tok^T
	n      int // positions cached
	// scratch for up to T rows
	x, in, concat, y []T // (T, D): residual stream, sub-block input, concatenated heads, branch output
	hid, act         []T // (T, F)
	logit            []T // (T, T): one head's attention logits, then probabilities
	qn               []T // (T): squared norms of the new queries of one head (untied L2)
	last             []T // (D): the final LayerNorm of the last row
	logits           []T // (V)
}

// blockCache is what one block keeps of the cached positions.
type blockCache[T ops.Float] struct {
	packed []T // (T, k*D): each position's [q | k | v], or [q | v] for tied L2
	kn     []T // (H, T): squared norms of each head's keys (L2 only)
}

// newDecoder makes the decoder of m's current weights in m's dtype T.
func newDecoder[T ops.Float](m *Model) (*decoder[T], error) {
	blocks, err := blockWeightsOf[T](m)
	if err != nil {
		return nil, err
	}
	c := m.Cfg
	norm, err := layers.ParseNorm(c.Norm)
	if err != nil {
		return nil, err
	}
	t, d, f := c.Context, c.Width, c.hidden()
	dec := &decoder[T]{cfg: c, norm: norm, heads: c.Heads, width: d, hd: d / c.Heads, hidden: f,
		tok: paramData[T](m.Tok.W), pos: paramData[T](m.Pos.W), blocks: blocks, lnf: lnWeightsOf[T](m.LNf),
		x: make([]T, t*d), in: make([]T, t*d), concat: make([]T, t*d), y: make([]T, t*d),
		hid: make([]T, t*f), act: make([]T, t*f), logit: make([]T, t*t), qn: make([]T, t),
		last: make([]T, d), logits: make([]T, c.Vocab)}
	if m.Head != nil {
		dec.out = paramData[T](m.Head.W)
	}
	for _, b := range blocks {
		bc := blockCache[T]{packed: make([]T, t*len(b.packed)/d)}
		if b.kind != ops.DotProduct {
			bc.kn = make([]T, c.Heads*t)
		}
		dec.caches = append(dec.caches, bc)
	}
	return dec, nil
}

// config is the model's configuration.
func (dc *decoder[T]) config() Config { return dc.cfg }

// cached is the number of positions cached.
func (dc *decoder[T]) cached() int { return dc.n }

// setCached keeps the first n cached positions.
func (dc *decoder[T]) setCached(n int) { dc.n = n }

// run computes the n = len(tokens) rows at positions pos..pos+n-1, attending to the cached
// positions before them, and returns the logits of the last row.
func (dc *decoder[T]) run(tokens []int, pos int) []float64 {
	n, d := len(tokens), dc.width
	x := dc.x[:n*d] // (n, D)
	for i, id := range tokens {
		row, te, pe := x[i*d:(i+1)*d], dc.tok[id*d:(id+1)*d], dc.pos[(pos+i)*d:(pos+i+1)*d]
		for j := range row {
			row[j] = te[j] + pe[j]
		}
	}
	for l := range dc.blocks {
		b, c := &dc.blocks[l], &dc.caches[l]
		dc.attention(b, c, dc.subInput(x, b.ln1, n), n, pos)
		dc.residual(x, b.ln1, n)
		dc.mlp(b, dc.subInput(x, b.ln2, n), n)
		dc.residual(x, b.ln2, n)
	}
	dc.n = pos + n
	ops.LayerNormRows(dc.last, x[(n-1)*d:], dc.lnf.gain, dc.lnf.bias, dc.lnf.eps)
	v := dc.cfg.Vocab
	if dc.out == nil {
		mul(true, 1, v, d, 1, dc.last, d, dc.tok, d, 0, dc.logits, v)
	} else {
		mul(false, 1, v, d, 1, dc.last, d, dc.out, v, 0, dc.logits, v)
	}
	out := make([]float64, v)
	for i, z := range dc.logits {
		out[i] = float64(z)
	}
	return out
}

// subInput is the input of a sub-block from the residual stream x (n, D): LN(x) before a
// pre-LN sub-block, x itself otherwise.
func (dc *decoder[T]) subInput(x []T, ln *lnWeights[T], n int) []T {
	if dc.norm != layers.PreLN || ln == nil {
		return x
	}
	in := dc.in[:n*dc.width]
	ops.LayerNormRows(in, x, ln.gain, ln.bias, ln.eps)
	return in
}

// residual adds the sub-block's output dc.y to x (n, D), then applies ln after a post-LN
// sub-block.
func (dc *decoder[T]) residual(x []T, ln *lnWeights[T], n int) {
	for i, v := range dc.y[:n*dc.width] {
		x[i] += v
	}
	if dc.norm == layers.PostLN && ln != nil {
		ops.LayerNormRows(x, x, ln.gain, ln.bias, ln.eps)
	}
}

// attention writes the attention of the n new rows in (n, D) at positions pos.. into dc.y:
// their packed projections join the cache, each head's logits against the pos+n cached
// keys go through the causal softmax, and the heads' P v are concatenated and mapped by
// W^O. The logits are the Attention op's: dp q.k / sqrt(d), L2 (2 q.k - |q|^2 - |k|^2) / sqrt(d).
func (dc *decoder[T]) attention(b *blockWeights[T], c *blockCache[T], in []T, n, pos int) {
	d, hd, t := dc.width, dc.hd, dc.cfg.Context
	ld := len(b.packed) / d // k*D
	mul(false, n, ld, d, 1, in, d, b.packed, ld, 0, c.packed[pos*ld:], ld)
	kOff, vOff := d, 2*d
	if b.kind == ops.L2 {
		kOff, vOff = 0, d
	}
	m := pos + n // keys visible to the last new row
	scale := T(1 / math.Sqrt(float64(hd)))
	concat := dc.concat[:n*d] // (n, D)
	for h := 0; h < dc.heads; h++ {
		q, k, v := c.packed[pos*ld+h*hd:], c.packed[kOff+h*hd:], c.packed[vOff+h*hd:]
		s := dc.logit[:n*m] // (n, m)
		if b.kind == ops.DotProduct {
			mul(true, n, m, hd, scale, q, ld, k, ld, 0, s, m)
		} else {
			kn := c.kn[h*t : h*t+m]
			ops.SquaredNorms(kn[pos:], k[pos*ld:], ld, hd)
			qn := kn[pos:]
			if b.kind == ops.L2Untied {
				qn = dc.qn[:n]
				ops.SquaredNorms(qn, q, ld, hd)
			}
			mul(true, n, m, hd, 2*scale, q, ld, k, ld, 0, s, m)
			for i := 0; i < n; i++ {
				row := s[i*m : (i+1)*m]
				for j := range row {
					row[j] -= scale * (qn[i] + kn[j])
				}
			}
		}
		for i := 0; i < n; i++ {
			ops.SoftmaxRow(s[i*m:(i+1)*m], s[i*m:(i+1)*m], pos+i+1)
		}
		mul(false, n, hd, m, 1, s, m, v, ld, 0, concat[h*hd:], d)
	}
	mul(false, n, d, d, 1, concat, d, b.wo, d, 0, dc.y, d)
}

// mlp writes the MLP of the n rows in (n, D) into dc.y: x W1 + b1, GELU (ELU for the
// invertible blocks' spectral MLP), times W2 plus b2, the biases added first as Linear does.
func (dc *decoder[T]) mlp(b *blockWeights[T], in []T, n int) {
	d, f := dc.width, dc.hidden
	hid, act, y := dc.hid[:n*f], dc.act[:n*f], dc.y[:n*d]
	for r := 0; r < n; r++ {
		copy(hid[r*f:(r+1)*f], b.fcB)
		copy(y[r*d:(r+1)*d], b.prjB)
	}
	mul(false, n, f, d, 1, in, d, b.fc, f, 1, hid, f)
	if b.elu {
		ops.ELUInto(act, hid)
	} else {
		ops.GELUInto(act, hid)
	}
	mul(false, n, d, f, 1, act, f, b.proj, d, 1, y, d)
}

// mul writes c = alpha a b + beta c for a (n, k), b (k, cols) or, with transB, b^T for b
// (cols, k), and c (n, cols), row-major with strides lda, ldb and ldc: one row (a step) by
// ops.Gemv, which reads b once, more rows (a prefill) by ops.Gemm.
func mul[T ops.Float](transB bool, n, cols, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	switch {
	case n > 1:
		ops.Gemm(false, transB, n, cols, k, alpha, a, lda, b, ldb, beta, c, ldc)
	case transB: // c = b a^T, b (cols, k)
		ops.Gemv(false, cols, k, alpha, b, ldb, a, beta, c)
	default: // c = b^T a^T, b (k, cols)
		ops.Gemv(true, k, cols, alpha, b, ldb, a, beta, c)
	}
}
