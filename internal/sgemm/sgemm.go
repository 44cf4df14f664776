// Package sgemm is a float32 general matrix product in pure Go and Go assembly, built the
// way BLIS and OpenBLAS build theirs: panels of op(A) and op(B) are packed into contiguous
// buffers (the transposes are resolved while packing, so one micro-kernel serves all four
// cases) and a register-tiled micro-kernel multiplies them, with AVX2 and FMA on amd64
// processors that have both and a portable Go kernel everywhere else.
//
// The product runs on the calling goroutine: callers that want parallelism split the rows
// of C themselves (lipformer/ops does, across GOMAXPROCS goroutines), which keeps each
// call's working set in one core's caches; calls share only a free list of packing buffers.
package sgemm

import (
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
)

// Register tile of the micro-kernel: it computes an mr x nr block of C, mr rows of the
// packed A panel against nr columns of the packed B panel. On amd64 the 6 x 16 block is
// twelve 8-float YMM accumulators (two per row), leaving four of the sixteen YMM registers
// for the two 8-float slices of B and the broadcast elements of A.
const (
	mr = 6
	nr = 16
)

// Cache blocking, as BLIS chooses it for AVX2 processors:
//
//   - kc is the depth of one rank-kc update: a kc x nr micro-panel of packed B (16 KiB)
//     stays in the 32 KiB L1 data cache while the micro-kernel runs down the rows of A;
//   - mc is the number of rows of op(A) packed at once: the mc x kc block of A (168 KiB)
//     stays in the L2 cache while it is multiplied by every micro-panel of B;
//   - nc is the number of columns of op(B) packed at once: the kc x nc panel (1 MiB) is
//     meant to stay in the L2 or L3 cache while every block of A passes over it. BLIS takes
//     4080 columns (4 MiB); the products of this project have at most 1024 columns, and
//     a smaller panel keeps the buffers that every call holds small.
//
// mc is a multiple of mr and nc of nr, so only the last block in each direction has edge
// tiles.
const (
	kc = 256
	mc = 168
	nc = 1024
)

// kernel computes the first rows (1..mr) rows of the mr x nr block c = ap * bp + beta * c,
// where ap is a packed kc-deep panel of A (mr values per step of k) and bp a packed panel
// of B (nr values per step of k), both at least depth steps long; c has row stride ldc
// and mr rows, of which the kernel may compute more than asked. A row's result does not
// depend on rows. With beta == 0 the old contents of c are not read, so NaN and Inf there
// are overwritten.
type kernel func(depth, rows int, ap, bp, c []float32, ldc int, beta float32)

// direct computes the full mr x nr block c = op(A) * op(B) + beta * c as kernel does, but
// reads op(A) where it lies: its element (r, p) is a[r*rs + p*cs] (rs = lda, cs = 1 for A
// as stored; rs = 1, cs = lda for A transposed; rs = 1, cs = mr for a packed panel), and
// the nr values of op(B) at step p of k at bp[p*bs:] (bs = nr for a packed panel, ldb for B
// read in its own rows). Packing costs a copy of every element per product, as much as
// the micro-kernel's work when the other operand is thin (a thin MLP's 64 columns, or its
// weight gradient's 128 rows split over two cores: docs/performance.md, "The invertible
// recipe's step"); the direct kernel skips it. Each element of c is the same chain of FMAs
// as kernel's, bit for bit.
type direct func(depth int, a []float32, rs, cs int, bp []float32, bs int, c []float32, ldc int, beta float32)

// wide is direct for an mr x 2nr block: two panels of B side by side, the first at bp0
// and the second at bp1, both with step stride bs; c's block is 2nr columns wide. Each
// element of c is the same chain of FMAs as direct's, bit for bit.
type wide func(depth int, a []float32, rs, cs int, bp0, bp1 []float32, bs int, c []float32, ldc int, beta float32)

// kernels are the micro-kernels of a product: packed, and direct when the processor has
// one (nil otherwise), used for products with alpha == 1: for their full mr-row tiles,
// and for every tile when op(B) is B as stored (read in place); and wide when the
// processor has one (nil otherwise), for pairs of full panels of B and full mr-row tiles,
// of A in place or packed.
type kernels struct {
	packed kernel
	direct direct
	wide   wide
}

// buffers are the packing buffers of one call, reused across calls through free.
type buffers struct {
	a, b []float32
	tile [mr * nr]float32 // the micro-kernel's output for a tile cut by the edge of C
}

// free holds the packing buffers not in use, shared by all calls, so that steady-state
// calls allocate nothing. A buffer is made at its largest size (mc x kc and kc x nc, 1.2
// MiB), so that once made it serves every product. The first call makes one per
// processor (GOMAXPROCS), as many as ops runs products at once; later calls make one only
// when more run at once than that, and free keeps up to maxFree per processor. A
// sync.Pool would not do: it drops its contents at garbage collections and keeps one
// buffer per processor out of the others' reach, so a training step would allocate
// buffers at random.
var free struct {
	sync.Mutex
	bufs []*buffers
	made int // buffers made so far
}

// maxFree bounds the buffers kept per processor.
const maxFree = 2

// getBuffers takes a buffer from free, or makes one.
func getBuffers() *buffers {
	free.Lock()
	defer free.Unlock()
	for free.made < runtime.GOMAXPROCS(0) {
		free.bufs = append(free.bufs, newBuffers())
		free.made++
	}
	if n := len(free.bufs); n > 0 {
		b := free.bufs[n-1]
		free.bufs = free.bufs[:n-1]
		return b
	}
	free.made++
	return newBuffers()
}

// newBuffers makes packing buffers of the largest size.
func newBuffers() *buffers {
	return &buffers{a: make([]float32, mc*kc), b: make([]float32, kc*nc)}
}

// putBuffers returns b to free, or drops it when free is full.
func putBuffers(b *buffers) {
	free.Lock()
	defer free.Unlock()
	if len(free.bufs) < maxFree*runtime.GOMAXPROCS(0) {
		free.bufs = append(free.bufs, b)
	}
}

// Panic messages, in gonum's words.
const (
	badTranspose = "blas: illegal transpose"
	mLT0         = "blas: m < 0"
	nLT0         = "blas: n < 0"
	kLT0         = "blas: k < 0"
	badLdA       = "blas: bad leading dimension of A"
	badLdB       = "blas: bad leading dimension of B"
	badLdC       = "blas: bad leading dimension of C"
	shortA       = "blas: insufficient length of a"
	shortB       = "blas: insufficient length of b"
	shortC       = "blas: insufficient length of c"
)

// Accelerated reports whether Sgemm runs an assembly micro-kernel on this processor.
// Without one its portable kernel is slower than gonum's Sgemm (3-5 against 6-8 GFLOP/s
// on one core), and callers should prefer gonum's.
func Accelerated() bool { return accelerated() }

// Sgemm computes C = alpha * op(A) * op(B) + beta * C on row-major matrices, with gonum's
// semantics: op(A) is m x k, op(B) is k x n, C is m x n with row stride ldc; op(X) is X for
// blas.NoTrans and its transpose for blas.Trans or blas.ConjTrans. With beta == 0, C is
// overwritten (NaN and Inf in it are ignored); with alpha == 0 or k == 0, C is only scaled
// by beta. It panics, with gonum's messages, on a bad transpose, negative size, leading
// dimension too small or slice too short. It runs on the calling goroutine.
func Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gemm(bestKernels(), tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// gemm is Sgemm with the micro-kernels kerns, so that tests can run every kernel.
func gemm(kerns kernels, tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if !validTranspose(tA) || !validTranspose(tB) {
		panic(badTranspose)
	}
	transA, transB := tA != blas.NoTrans, tB != blas.NoTrans
	switch {
	case m < 0:
		panic(mLT0)
	case n < 0:
		panic(nLT0)
	case k < 0:
		panic(kLT0)
	}
	rowA, colA := m, k // op(A) as stored
	if transA {
		rowA, colA = k, m
	}
	rowB, colB := k, n
	if transB {
		rowB, colB = n, k
	}
	switch {
	case lda < max(1, colA):
		panic(badLdA)
	case ldb < max(1, colB):
		panic(badLdB)
	case ldc < max(1, n):
		panic(badLdC)
	}
	if m == 0 || n == 0 {
		return
	}
	switch {
	case len(a) < lda*(rowA-1)+colA:
		panic(shortA)
	case len(b) < ldb*(rowB-1)+colB:
		panic(shortB)
	case len(c) < ldc*(m-1)+n:
		panic(shortC)
	}
	if alpha == 0 || k == 0 {
		scale(m, n, beta, c, ldc)
		return
	}

	buf := getBuffers()
	defer putBuffers(buf)
	direct := kerns.direct != nil && alpha == 1
	ks, nStep := kStep(k), min(nc, roundUp(n, nr))
	buf.b = buf.b[:nStep*ks] // nStep <= nc
	for j0 := 0; j0 < n; j0 += nStep {
		nb := min(nStep, n-j0)
		for p0 := 0; p0 < k; p0 += ks {
			kb := min(ks, k-p0)
			src := panelsB{packed: buf.b}
			if direct && !transB && bInPlace(m, ldb) {
				src.in, src.ld, src.full = b[p0*ldb+j0:], ldb, nb/nr*nr
			}
			if src.full < nb {
				packB(buf.b[src.full*kb:], transB, b, ldb, p0, j0+src.full, kb, nb-src.full)
			}
			rankUpdate(kerns, buf, src, transA, a, lda, m, p0, kb, nb, alpha, beta, c[j0:], ldc)
		}
	}
}

// bInPlace reports whether a direct product of m rows reads a B of row stride ldb (not
// transposed) in place rather than packing it: when its rows are at most 512 bytes
// apart, or when too few rows share the packing. A micro-panel read in place steps
// through B at ldb floats a row; at a stride of 1 KiB or more its rows crowd a few sets
// of the L1 cache (a 4 KiB stride puts them all in one), and at P3's shapes packing B
// made the direct product 10-40% faster on an AVX-512 Xeon (docs/performance.md, "BLAS
// and packing"). Packed or not, the product is the same to the bit.
func bInPlace(m, ldb int) bool { return ldb <= 128 || m < 256 }

// panelsB are the column micro-panels of a kb x nb block of op(B): the first full columns
// read in place from in (B as stored, row stride ld; none when in is nil), the others
// packed in packed as packB lays them out.
type panelsB struct {
	in     []float32
	ld     int
	full   int
	packed []float32
}

// panel returns micro-panel jp (a multiple of nr) of a block of depth kb and its step
// stride: nr values of step p of k at p*stride.
func (s panelsB) panel(jp, kb int) ([]float32, int) {
	if jp < s.full {
		return s.in[jp:], s.ld
	}
	return s.packed[jp*kb : (jp+nr)*kb], nr
}

// kStep is the depth of the rank updates of a product of depth k: k split into equal
// blocks of at most kc, so that no block is much shallower than the others.
func kStep(k int) int {
	blocks := (k + kc - 1) / kc
	return (k + blocks - 1) / blocks
}

// rankUpdate adds the rank-kb update of depth p0..p0+kb to the m rows of c (its first nb
// columns): op(A)'s columns p0.. times the panels src of nb columns, in blocks of rows
// split as k is (at most mc, rounded up to mr), each multiplied by macro. A block is
// packed into buf, or, with a direct kernel and alpha == 1, read where it lies, packing
// only its last panel when that has fewer than mr rows. The first update (p0 == 0)
// applies beta, the others accumulate.
func rankUpdate(kerns kernels, buf *buffers, src panelsB, transA bool, a []float32, lda, m, p0, kb, nb int, alpha, beta float32, c []float32, ldc int) {
	if p0 > 0 {
		beta = 1
	}
	blocks := (m + mc - 1) / mc
	mStep := roundUp((m+blocks-1)/blocks, mr) // <= mc
	buf.a = buf.a[:mStep*kb]
	for i0 := 0; i0 < m; i0 += mStep {
		mb := min(mStep, m-i0)
		d := inPlace{}
		if kerns.direct != nil && alpha == 1 {
			if transA {
				d = inPlace{kern: kerns.direct, a: a[p0*lda+i0:], rs: 1, cs: lda}
			} else {
				d = inPlace{kern: kerns.direct, a: a[i0*lda+p0:], rs: lda, cs: 1}
			}
			if full := mb / mr * mr; full < mb {
				packA(buf.a[full*kb:], transA, a, lda, i0+full, p0, mb-full, kb, alpha)
			}
		} else {
			packA(buf.a, transA, a, lda, i0, p0, mb, kb, alpha)
		}
		macro(kerns, d, buf, src, mb, nb, kb, c[i0*ldc:], ldc, beta)
	}
}

// inPlace is a block of op(A) that a direct kernel reads where it lies: its element
// (i, p) is a[i*rs + p*cs]. Without kern the block is packed.
type inPlace struct {
	kern   direct
	a      []float32
	rs, cs int
}

// validTranspose reports whether t is one of the three transposes.
func validTranspose(t blas.Transpose) bool {
	return t == blas.NoTrans || t == blas.Trans || t == blas.ConjTrans
}

// roundUp rounds x up to a multiple of q.
func roundUp(x, q int) int { return (x + q - 1) / q * q }

// scale sets the m x n matrix c to beta * c, zeroing it when beta == 0.
func scale(m, n int, beta float32, c []float32, ldc int) {
	if beta == 1 {
		return
	}
	for i := range m {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// packA copies alpha times the mb x kb block of op(A) at (i0, p0) into dst as
// ceil(mb/mr) panels of mr rows, each kb steps of mr consecutive values (the column of
// the panel at that step); rows beyond mb are zero. Full panels are written in order, one
// step of k at a time, from mr rows of A read side by side (or one row of A when it is
// transposed); the last, partial panel goes element by element.
func packA(dst []float32, trans bool, a []float32, lda, i0, p0, mb, kb int, alpha float32) {
	for ip := 0; ip < mb; ip += mr {
		rows := min(mr, mb-ip)
		panel := dst[ip*kb : (ip+mr)*kb]
		i := i0 + ip
		switch {
		case rows < mr && trans: // each step of k is a row of A, of which rows values are used
			clear(panel)
			for p := range kb {
				out := panel[p*mr : p*mr+rows]
				for r, v := range a[(p0+p)*lda+i:][:rows] {
					out[r] = alpha * v
				}
			}
		case rows < mr: // rows rows of A, each read along k
			clear(panel)
			for r := range rows {
				for p, v := range a[(i+r)*lda+p0:][:kb] {
					panel[p*mr+r] = alpha * v
				}
			}
		case trans: // column i of A is row i of op(A): each step of k is a row of A
			for p := range kb {
				src := (*[mr]float32)(a[(p0+p)*lda+i:])
				out := (*[mr]float32)(panel[p*mr:])
				for r := range mr {
					out[r] = alpha * src[r]
				}
			}
		default: // rows i..i+mr-1 of A, read side by side
			r0 := a[i*lda+p0:][:kb]
			r1 := a[(i+1)*lda+p0:][:kb]
			r2 := a[(i+2)*lda+p0:][:kb]
			r3 := a[(i+3)*lda+p0:][:kb]
			r4 := a[(i+4)*lda+p0:][:kb]
			r5 := a[(i+5)*lda+p0:][:kb]
			for p := range r0 {
				out := (*[mr]float32)(panel[p*mr:])
				out[0], out[1], out[2] = alpha*r0[p], alpha*r1[p], alpha*r2[p]
				out[3], out[4], out[5] = alpha*r3[p], alpha*r4[p], alpha*r5[p]
			}
		}
	}
}

// opAt is op(A)[i][p] for a row-major A with row stride lda, transposed or not.
func opAt(trans bool, a []float32, lda, i, p int) float32 {
	if trans {
		return a[p*lda+i]
	}
	return a[i*lda+p]
}

// packB copies the kb x nb block of op(B) at (p0, j0) into dst as ceil(nb/nr) panels of
// nr columns, each kb steps of nr consecutive values (the row of the panel at that step);
// columns beyond nb are zero.
func packB(dst []float32, trans bool, b []float32, ldb, p0, j0, kb, nb int) {
	for jp := 0; jp < nb; jp += nr {
		cols := min(nr, nb-jp)
		panel := dst[jp*kb : (jp+nr)*kb]
		switch {
		case cols < nr:
			clear(panel)
			for q := range cols {
				for p := range kb {
					panel[p*nr+q] = opAt(trans, b, ldb, p0+p, j0+jp+q)
				}
			}
		case trans: // row j of B is column j of op(B): four rows read side by side, each
			// step of k writing four consecutive values of the panel
			for q := 0; q < nr; q += 4 {
				j := j0 + jp + q
				r0, r1 := b[j*ldb+p0:][:kb], b[(j+1)*ldb+p0:][:kb]
				r2, r3 := b[(j+2)*ldb+p0:][:kb], b[(j+3)*ldb+p0:][:kb]
				for p, v := range r0 {
					out := (*[4]float32)(panel[p*nr+q:])
					out[0], out[1], out[2], out[3] = v, r1[p], r2[p], r3[p]
				}
			}
		default: // each step of k is nr consecutive values of a row of B
			for p := range kb {
				*(*[nr]float32)(panel[p*nr:]) = *(*[nr]float32)(b[(p0+p)*ldb+j0+jp:])
			}
		}
	}
}

// macro multiplies the mb x kb block of A, packed in buf.a or read in place by d.kern, by
// the kb x nb panels src of B into the mb x nb block c, one mr x nr tile at a time, or
// with a wide kernel one mr x 2nr tile for two full panels of B of the same kind (both
// read in place or both packed) and a full tile of A: the outer loop runs over the
// micro-panels of B, so each stays in L1 while the inner loop brings the micro-panels of
// A from L2. Tiles of fewer than mr rows always come from buf.a, through the direct
// kernel when their panel of B is read in place. Tiles cut by the edge of C are computed
// into buf.tile and the part inside C merged.
func macro(kerns kernels, d inPlace, buf *buffers, src panelsB, mb, nb, kb int, c []float32, ldc int, beta float32) {
	for jp := 0; jp < nb; {
		if kerns.wide == nil || jp+2*nr > nb || (jp < src.full) != (jp+nr < src.full) {
			for ip := 0; ip < mb; ip += mr {
				tile(kerns.packed, d, buf, src, jp, ip, mb, nb, kb, c, ldc, beta)
			}
			jp += nr
			continue
		}
		bp0, bs := src.panel(jp, kb)
		bp1, _ := src.panel(jp+nr, kb)
		for ip := 0; ip < mb; ip += mr {
			if mb-ip < mr {
				tile(kerns.packed, d, buf, src, jp, ip, mb, nb, kb, c, ldc, beta)
				tile(kerns.packed, d, buf, src, jp+nr, ip, mb, nb, kb, c, ldc, beta)
				continue
			}
			a, rs, cs := buf.a[ip*kb:(ip+mr)*kb], 1, mr
			if d.kern != nil {
				a, rs, cs = d.a[ip*d.rs:], d.rs, d.cs
			}
			kerns.wide(kb, a, rs, cs, bp0, bp1, bs, c[ip*ldc+jp:], ldc, beta)
		}
		jp += 2 * nr
	}
}

// tile computes the tile of macro's block at row ip and column jp, of up to mr x nr.
func tile(kern kernel, d inPlace, buf *buffers, src panelsB, jp, ip, mb, nb, kb int, c []float32, ldc int, beta float32) {
	bp, bs := src.panel(jp, kb)
	cols, rows := min(nr, nb-jp), min(mr, mb-ip)
	out, ld, b := c[ip*ldc+jp:], ldc, beta
	if rows < mr || cols < nr {
		out, ld, b = buf.tile[:], nr, 0
	}
	switch {
	case d.kern != nil && rows == mr:
		d.kern(kb, d.a[ip*d.rs:], d.rs, d.cs, bp, bs, out, ld, b)
	case jp < src.full: // B in place: the packed rows of A through the direct kernel
		d.kern(kb, buf.a[ip*kb:(ip+mr)*kb], 1, mr, bp, bs, out, ld, b)
	default:
		kern(kb, rows, buf.a[ip*kb:(ip+mr)*kb], bp, out, ld, b)
	}
	if rows == mr && cols == nr {
		return
	}
	for r := range rows {
		dst := c[(ip+r)*ldc+jp : (ip+r)*ldc+jp+cols]
		src := buf.tile[r*nr : r*nr+cols]
		if beta == 0 {
			copy(dst, src)
			continue
		}
		for q, v := range src {
			dst[q] = v + beta*dst[q]
		}
	}
}
