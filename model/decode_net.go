package model

import (
	"math"
	"runtime"
	"sync"

	"lipformer/kernel"
	"lipformer/ops"
	"lipformer/spec"
)

// decoder is the Decoder in the element type T. The rows of a run are the B sequences'
// new positions, sequence by sequence: row s n + i is position pos + i of sequence s.
type decoder[T kernel.Float] struct {
	cfg    Config
	norm   spec.Norm
	b      int   // B, sequences in step
	heads  int   // H
	width  int   // D
	hd     int   // head width d = D/H
	hidden int   // F
	tok    []T   // (V, D), or (Config.TokenRows, D) with n-byte tokens (Config.TokenRow)
	pos    []T   // (T, D)
	ids    []int // (B, T): the token at each cached position, which the n-byte rows after it read
	blocks []blockWeights[T]
	packs  []blockPacks // each block's weights packed for products of several rows
	head   *kernel.PackedWeights
	caches []blockCache[T]
	lnf    *lnWeights[T]
	out    []T // (D, V), or nil: the head is tok^T
	n      int // positions cached (the same in every sequence)
	// scratch for up to B T rows
	x, in, concat, y []T              // (B T, D): residual stream, sub-block input, concatenated heads, branch output
	hid, act         []T              // (B T, F)
	proj             []T              // (B T, 3D): the new rows' packed projections, before they join the caches
	attn             []attnScratch[T] // one per goroutine of attention
	last             []T              // (B, D): the final LayerNorm of each sequence's last row
	logits           []T              // (B, V)
}

// attnScratch is what one goroutine's attention of a sequence needs.
type attnScratch[T kernel.Float] struct {
	logit []T // (T, T): one head's attention logits, then probabilities
	qn    []T // (T): squared norms of the new queries of one head (untied L2)
}

// blockPacks are a block's weight matrices packed once for products of several rows
// (kernel.PackedWeights): all nil in float64 and where the processor has no sgemm kernel.
type blockPacks struct {
	packed, wo, mix *kernel.PackedWeights
	mlps            []mlpPacks // one per MLP sub-block
}

// mlpPacks are one MLP sub-block's packed weights.
type mlpPacks struct{ fc, proj *kernel.PackedWeights }

// blockCache is what one block keeps of the cached positions, each sequence's and head's
// keys and values contiguous, so that a step reads them in two streams; tied L2 keeps
// only its keys, which are its queries and serve as its values (blockWeights.wo).
type blockCache[T kernel.Float] struct {
	k, v []T // (B, H, T, d): keys (tied L2: the queries x W^Q) and values (nil for tied L2)
	kn   []T // (B, H, T): squared norms of the keys (L2 only)
	mix  []T // (B, T, D): the mixing sub-block's inputs, or nil without one
}

// newDecoder makes the decoder of b sequences of m's current weights in m's dtype T.
func newDecoder[T kernel.Float](m *Model, b int) (*decoder[T], error) {
	blocks, err := blockWeightsOf[T](m)
	if err != nil {
		return nil, err
	}
	c := m.Cfg
	norm := c.Norm
	t, d, f := c.Context, c.Width, c.HiddenWidth()
	bt := b * t
	dec := &decoder[T]{cfg: c, norm: norm, b: b, heads: c.Heads, width: d, hd: d / c.Heads, hidden: f,
		tok: tableData[T](m.Tok), pos: paramData[T](m.Pos.W), blocks: blocks, lnf: finalWeightsOf[T](m.Final),
		x: make([]T, bt*d), in: make([]T, bt*d), concat: make([]T, bt*d), y: make([]T, bt*d),
		hid: make([]T, bt*f), act: make([]T, bt*f), proj: make([]T, bt*3*d),
		last: make([]T, b*d), logits: make([]T, b*c.Vocab), ids: make([]int, bt)}
	if m.Head != nil {
		dec.out = headData[T](m)
		dec.head = packWeights(false, d, c.Vocab, dec.out, c.Vocab)
	} else {
		dec.head = packWeights(true, d, c.Vocab, dec.tok, d)
	}
	for _, bw := range blocks {
		ld := len(bw.packed) / d
		pk := blockPacks{packed: packWeights(false, d, ld, bw.packed, ld), wo: packWeights(false, d, d, bw.wo, d)}
		if bw.mix != nil {
			pk.mix = packWeights(false, d, d, bw.mix.w, d)
		}
		for _, mw := range bw.mlps {
			pk.mlps = append(pk.mlps, mlpPacks{fc: packWeights(false, d, f, mw.fc, f), proj: packWeights(false, f, d, mw.proj, d)})
		}
		dec.packs = append(dec.packs, pk)
	}
	for _, bw := range blocks {
		bc := blockCache[T]{k: make([]T, bt*d)}
		if bw.kind != ops.L2 {
			bc.v = make([]T, bt*d)
		}
		if bw.kind != ops.DotProduct {
			bc.kn = make([]T, b*c.Heads*t)
		}
		if bw.mix != nil {
			bc.mix = make([]T, bt*d)
		}
		dec.caches = append(dec.caches, bc)
	}
	return dec, nil
}

// config is the model's configuration.
func (dc *decoder[T]) config() Config { return dc.cfg }

// batch is B.
func (dc *decoder[T]) batch() int { return dc.b }

// cached is the number of positions cached.
func (dc *decoder[T]) cached() int { return dc.n }

// setCached keeps the first n cached positions.
func (dc *decoder[T]) setCached(n int) { dc.n = n }

// run computes each sequence's n = len(tokens[s]) rows at positions pos..pos+n-1,
// attending to the cached positions before them, and returns the logits of each
// sequence's last row. With at least as many sequences as GOMAXPROCS, the sequences are
// split into GOMAXPROCS lanes, each run through the whole network by one goroutine: one
// synchronisation per run, and no product split so thin that its goroutines would pack
// the same rows again. With fewer, one lane runs them all, its products and attention
// split across the cores. Either way a batch's products with the packed weights go
// through kernel.GemmPacked's bit-identical kernels and its attention products stay serial,
// so that a batch decoder's logits do not depend on GOMAXPROCS.
func (dc *decoder[T]) run(tokens [][]int, pos int) [][]float64 {
	n, procs := len(tokens[0]), runtime.GOMAXPROCS(0)
	for len(dc.attn) < procs {
		t := dc.cfg.Context
		dc.attn = append(dc.attn, attnScratch[T]{logit: make([]T, t*t), qn: make([]T, t)})
	}
	out := make([][]float64, dc.b)
	batched := dc.b > 1
	if dc.b < procs {
		dc.runLane(tokens, out, lane{lo: 0, hi: dc.b, n: n, pos: pos, par: true, batched: batched})
	} else {
		var wg sync.WaitGroup
		for w := range procs {
			wg.Go(func() {
				dc.runLane(tokens, out, lane{lo: w * dc.b / procs, hi: (w + 1) * dc.b / procs, n: n, pos: pos, w: w, batched: batched})
			})
		}
		wg.Wait()
	}
	dc.n = pos + n
	return out
}

// lane is the part of a run that one goroutine computes: the sequences [lo, hi), each of
// n new rows at positions pos.., which are the rows [lo n, hi n) of every scratch matrix.
// par: the lane is the whole batch, and its products and its sequences' attention use up
// to GOMAXPROCS goroutines; else its products and attention stay on its goroutine, with
// the attention scratch w (the row kernels of LayerNorm and GELU may still split a large
// prefill). batched: the decoder runs several sequences, so that a product of one row
// with a packed matrix goes through the packed kernels too, as it would in a lane of more.
type lane struct {
	lo, hi, n, pos, w int
	par, batched      bool
}

// rows is the number of rows of the lane.
func (l lane) rows() int { return (l.hi - l.lo) * l.n }

// of is the lane's rows of a scratch matrix m of the given width.
func of[T kernel.Float](m []T, l lane, width int) []T { return m[l.lo*l.n*width : l.hi*l.n*width] }

// runLane runs the lane's sequences through the network and sets their elements of out
// to the logits after each one's last row.
func (dc *decoder[T]) runLane(tokens [][]int, out [][]float64, l lane) {
	d, v, t := dc.width, dc.cfg.Vocab, dc.cfg.Context
	x := of(dc.x, l, d) // (lane rows, D)
	for s := l.lo; s < l.hi; s++ {
		ids := dc.ids[s*t : (s+1)*t]
		for i, id := range tokens[s] {
			p := l.pos + i
			ids[p] = id
			k := dc.cfg.TokenRow(ids, p)
			r := (s-l.lo)*l.n + i
			row, te, pe := x[r*d:(r+1)*d], dc.tok[k*d:(k+1)*d], dc.pos[p*d:(p+1)*d]
			for j := range row {
				row[j] = te[j] + pe[j]
			}
		}
	}
	for i := range dc.blocks {
		b, c, pk := &dc.blocks[i], &dc.caches[i], &dc.packs[i]
		if b.mix != nil {
			dc.mix(l, b.mix, pk.mix, c.mix, x)
			dc.residual(l, x, nil)
		}
		dc.attention(l, b, pk, c, dc.subInput(l, x, b.ln1))
		dc.residual(l, x, b.ln1)
		for k := range b.mlps {
			dc.mlp(l, &b.mlps[k], &pk.mlps[k], dc.subInput(l, x, b.ln2))
			dc.residual(l, x, b.ln2)
		}
	}
	last := dc.last[l.lo*d : l.hi*d] // (lane sequences, D)
	for s := range l.hi - l.lo {
		r := s*l.n + l.n - 1
		if dc.lnf.ball > 0 {
			kernel.BallNormRows(last[s*d:(s+1)*d], x[r*d:(r+1)*d], d, dc.lnf.ball)
		} else {
			kernel.LayerNormRows(last[s*d:(s+1)*d], x[r*d:(r+1)*d], dc.lnf.gain, dc.lnf.bias, dc.lnf.eps)
		}
	}
	logits := dc.logits[l.lo*v : l.hi*v] // (lane sequences, V)
	if dc.out == nil {
		mulW(l, dc.head, true, l.hi-l.lo, v, d, 1, last, d, dc.tok, d, 0, logits, v)
	} else {
		mulW(l, dc.head, false, l.hi-l.lo, v, d, 1, last, d, dc.out, v, 0, logits, v)
	}
	for s := l.lo; s < l.hi; s++ {
		out[s] = make([]float64, v)
		for i, z := range logits[(s-l.lo)*v : (s-l.lo+1)*v] {
			out[s][i] = float64(z)
		}
	}
}

// subInput is the input of a sub-block from the lane's residual stream x (lane rows, D):
// LN(x) before a pre-LN sub-block, B(x) before a ball-norm one, x itself otherwise.
func (dc *decoder[T]) subInput(l lane, x []T, ln *lnWeights[T]) []T {
	if ln == nil || (dc.norm != spec.PreLN && dc.norm != spec.BallPre) {
		return x
	}
	in := of(dc.in, l, dc.width)
	if dc.norm == spec.BallPre {
		kernel.BallNormRows(in, x, dc.width, ln.ball)
		return in
	}
	kernel.LayerNormRows(in, x, ln.gain, ln.bias, ln.eps)
	return in
}

// residual adds the sub-block's output, the lane's rows of dc.y, to x (lane rows, D), then
// applies ln after a post-LN sub-block.
func (dc *decoder[T]) residual(l lane, x []T, ln *lnWeights[T]) {
	for i, v := range of(dc.y, l, dc.width) {
		x[i] += v
	}
	if dc.norm == spec.PostLN && ln != nil {
		kernel.LayerNormRows(x, x, ln.gain, ln.bias, ln.eps)
	}
}

// attention writes the attention of the lane's new rows in (lane rows, D) into its rows of
// dc.y: their packed projections, computed for all rows at once; their keys and values join
// their sequence's cache; each sequence's and head's logits against its pos+n cached keys
// go through the causal softmax; and the heads' P v are concatenated and mapped by W^O, for
// all rows at once. Tied L2 caches its keys alone (its queries), its heads are P Q_h, and
// its W^O has the value maps folded in (blockWeights.wo). The logits are the Attention
// op's: dp q.k / sqrt(d), L2 (2 q.k - |q|^2 - |k|^2) / sqrt(d).
func (dc *decoder[T]) attention(l lane, b *blockWeights[T], pk *blockPacks, c *blockCache[T], in []T) {
	d, t, n := dc.width, dc.cfg.Context, l.n
	ld := len(b.packed) / d       // k*D
	proj := of(dc.proj, l, ld)    // (lane rows, k*D)
	concat := of(dc.concat, l, d) // (lane rows, D)
	mulW(l, pk.packed, false, l.rows(), ld, d, 1, in, d, b.packed, ld, 0, proj, ld)
	per := dc.heads * t * dc.hd    // one sequence's keys (H, T, d)
	par := l.par && l.hi-l.lo == 1 // one sequence: its products may be split
	attend := func(w, lo, hi int) {
		for i := lo; i < hi; i++ {
			s := l.lo + i
			cs := blockCache[T]{k: c.k[s*per : (s+1)*per]}
			if c.v != nil {
				cs.v = c.v[s*per : (s+1)*per]
			}
			if c.kn != nil {
				cs.kn = c.kn[s*dc.heads*t : (s+1)*dc.heads*t]
			}
			dc.attendSequence(par, b, &cs, &dc.attn[w], proj[i*n*ld:(i+1)*n*ld], concat[i*n*d:(i+1)*n*d], n, l.pos)
		}
	}
	if l.par {
		kernel.ParallelFor(l.hi-l.lo, 4*n*(l.pos+n)*d, attend)
	} else {
		attend(l.w, 0, l.hi-l.lo)
	}
	mulW(l, pk.wo, false, l.rows(), d, d, 1, concat, d, b.wo, d, 0, of(dc.y, l, d), d)
}

// attendSequence writes into concat (n, D) the heads' P v (tied L2: P Q_h) of one
// sequence's n new rows at positions pos.., whose projections proj (n, k*D) it first adds
// to the sequence's cache c (keys and values of the positions before them), with the
// scratch sc; its products use other goroutines only with par. Sequences are attended to
// in parallel: it writes nothing shared.
func (dc *decoder[T]) attendSequence(par bool, b *blockWeights[T], c *blockCache[T], sc *attnScratch[T], proj, concat []T, n, pos int) {
	d, hd, t := dc.width, dc.hd, dc.cfg.Context
	ld := len(b.packed) / d // k*D
	kOff, vOff := d, 2*d    // [Q | K | V]
	if b.kind == ops.L2 {
		kOff = 0 // [Q]: the keys are the queries
	}
	m := pos + n // keys visible to the last new row
	scale := T(1 / math.Sqrt(float64(hd)))
	for h := 0; h < dc.heads; h++ {
		k := c.k[h*t*hd : (h+1)*t*hd] // (T, d)
		for i := 0; i < n; i++ {
			copy(k[(pos+i)*hd:(pos+i+1)*hd], proj[i*ld+kOff+h*hd:])
		}
		v := k // tied L2: its keys serve as its values (blockWeights.wo)
		if b.kind != ops.L2 {
			v = c.v[h*t*hd : (h+1)*t*hd] // (T, d)
			for i := 0; i < n; i++ {
				copy(v[(pos+i)*hd:(pos+i+1)*hd], proj[i*ld+vOff+h*hd:])
			}
		}
		q := proj[h*hd:]    // (n, d), stride k*D
		s := sc.logit[:n*m] // (n, m)
		alpha := scale
		if b.kind != ops.DotProduct {
			alpha = 2 * scale
		}
		if n == 1 { // a step: the row kernels stream the cached keys
			kernel.DotRows(s, k[:m*hd], q[:hd], alpha)
		} else {
			mul(par, true, n, m, hd, alpha, q, ld, k, hd, 0, s, m)
		}
		if b.kind != ops.DotProduct {
			kn := c.kn[h*t : h*t+m]
			kernel.SquaredNorms(kn[pos:], k[pos*hd:], hd, hd)
			qn := kn[pos:] // tied L2: the queries are the keys
			if b.kind == ops.L2Untied {
				qn = sc.qn[:n]
				kernel.SquaredNorms(qn, q, ld, hd)
			}
			for i := 0; i < n; i++ {
				row := s[i*m : (i+1)*m]
				for j := range row {
					row[j] -= scale * (qn[i] + kn[j])
				}
			}
		}
		if b.bias != nil { // the position bias of offset pos+i-j
			bh := b.bias[h*len(b.bias)/dc.heads:]
			for i := 0; i < n; i++ {
				row := s[i*m : i*m+pos+i+1]
				for j := range row {
					row[j] += bh[pos+i-j]
				}
			}
		}
		for i := 0; i < n; i++ {
			kernel.SoftmaxRow(s[i*m:(i+1)*m], s[i*m:(i+1)*m], pos+i+1)
		}
		if n == 1 {
			kernel.WeightedRowSum(concat[h*hd:(h+1)*hd], s, v[:m*hd])
		} else {
			mul(par, false, n, hd, m, 1, s, m, v, hd, 0, concat[h*hd:], d)
		}
	}
}

// mix writes the mixing sub-block of the lane's rows x (lane rows, D) into its rows of
// dc.y: each new row joins its sequence's cache of inputs (B, T, D), is mixed with the
// k-1 rows before it (kernel.CausalMixRows' sums), and goes through W' plus b, the bias
// added first as Linear does.
func (dc *decoder[T]) mix(l lane, w *mixWeights[T], pk *kernel.PackedWeights, cache, x []T) {
	d, t, n, k := dc.width, dc.cfg.Context, l.n, len(w.rev)
	mixed, y := of(dc.concat, l, d), of(dc.y, l, d) // (lane rows, D)
	for s := range l.hi - l.lo {
		seq := cache[(l.lo+s)*t*d : (l.lo+s+1)*t*d] // (T, D)
		for i := range n {
			r, p := s*n+i, l.pos+i
			copy(seq[p*d:(p+1)*d], x[r*d:(r+1)*d])
			m := min(k, p+1) // rows p-m+1..p
			kernel.WeightedRowSum(mixed[r*d:(r+1)*d], w.rev[k-m:], seq[(p-m+1)*d:])
			copy(y[r*d:(r+1)*d], w.b)
		}
	}
	mulW(l, pk, false, l.rows(), d, d, 1, mixed, d, w.w, d, 1, y, d)
}

// mlpActivation is the activation of an MLP: GELU (the zero value), or an invertible
// block's spectral MLP's ELU or MaxMin.
type mlpActivation int

const (
	actGELU mlpActivation = iota
	actELU
	actMaxMin
)

// mlp writes the MLP of the lane's rows in (lane rows, D) into its rows of dc.y: x W1 + b1,
// b's activation, times W2 plus b2, the biases added first as Linear does.
func (dc *decoder[T]) mlp(l lane, b *mlpWeights[T], pk *mlpPacks, in []T) {
	d, f, n := dc.width, dc.hidden, l.rows()
	hid, a, y := of(dc.hid, l, f), of(dc.act, l, f), of(dc.y, l, d)
	for r := range n {
		copy(hid[r*f:(r+1)*f], b.fcB)
		copy(y[r*d:(r+1)*d], b.prjB)
	}
	mulW(l, pk.fc, false, n, f, d, 1, in, d, b.fc, f, 1, hid, f)
	switch b.act {
	case actELU:
		kernel.ELU(a, hid)
	case actMaxMin:
		kernel.MaxMin(a, hid)
	default:
		kernel.GELU(a, hid)
	}
	mulW(l, pk.proj, false, n, d, f, 1, a, f, b.proj, d, 1, y, d)
}

// mul writes c = alpha a b + beta c for a (n, k), b (k, cols) or, with transB, b^T for b
// (cols, k), and c (n, cols), row-major with strides lda, ldb and ldc: one row by kernel.Gemv,
// which reads b once, more rows (a prefill, or a step of a batch) by kernel.Gemm, or with par
// false kernel.GemmSerial.
func mul[T kernel.Float](par, transB bool, n, cols, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	switch {
	case n > 1 && par:
		kernel.Gemm(false, transB, n, cols, k, alpha, a, lda, b, ldb, beta, c, ldc)
	case n > 1:
		kernel.GemmSerial(false, transB, n, cols, k, alpha, a, lda, b, ldb, beta, c, ldc)
	case transB: // c = b a^T, b (cols, k)
		kernel.Gemv(false, cols, k, alpha, b, ldb, a, beta, c)
	default: // c = b^T a^T, b (k, cols)
		kernel.Gemv(true, k, cols, alpha, b, ldb, a, beta, c)
	}
}

// packWeights packs a float32 weight matrix for mulW (kernel.PackWeights), and returns nil for
// float64 ones.
func packWeights[T kernel.Float](transB bool, k, cols int, b []T, ldb int) *kernel.PackedWeights {
	if b32, ok := any(b).([]float32); ok {
		return kernel.PackWeights(transB, k, cols, b32, ldb)
	}
	return nil
}

// mulW is mul, in lane l, for a weight matrix b that pw holds packed, or nil: products of
// several rows, or of any rows in a batched lane, with a packed matrix go to kernel.GemmPacked
// (kernel.GemmPackedSerial outside a par lane), which does not pack it again. The one row of
// a one-sequence decoder goes to kernel.Gemv, which reads b once.
func mulW[T kernel.Float](l lane, pw *kernel.PackedWeights, transB bool, n, cols, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	packed := pw != nil && (n > 1 || l.batched)
	switch {
	case packed && l.par:
		kernel.GemmPacked(n, float32(alpha), any(a).([]float32), lda, pw, float32(beta), any(c).([]float32), ldc)
	case packed:
		kernel.GemmPackedSerial(n, float32(alpha), any(a).([]float32), lda, pw, float32(beta), any(c).([]float32), ldc)
	default:
		mul(l.par, transB, n, cols, k, alpha, a, lda, b, ldb, beta, c, ldc)
	}
}
