package sgemm

import "gonum.org/v1/gonum/blas"

// PackedB is a k x n matrix op(B) packed once into the micro-panels that Sgemm packs on
// every call, for products that apply the same B to many matrices A: a decoder's weights,
// applied to a few new rows at every step, where packing B would cost as much as the
// product. Its products are bit-identical to Sgemm's.
type PackedB struct {
	k, n  int
	kStep int // depth of one rank-kStep update, as Sgemm splits k
	// panels holds, for each block of kStep steps of k (the last shallower), the
	// ceil(n/nr) micro-panels of its rows of op(B): block p0 starts at p0 * ceil(n/nr) * nr,
	// and in it micro-panel q at q * nr * kb.
	panels []float32
}

// PackB packs op(B), k x n, row-major with row stride ldb (op(B) is B for blas.NoTrans,
// its transpose otherwise). It panics as Sgemm does on a bad transpose, negative size,
// leading dimension too small or slice too short.
func PackB(tB blas.Transpose, k, n int, b []float32, ldb int) *PackedB {
	if !validTranspose(tB) {
		panic(badTranspose)
	}
	switch {
	case k < 0:
		panic(kLT0)
	case n < 0:
		panic(nLT0)
	}
	trans := tB != blas.NoTrans
	rowB, colB := k, n
	if trans {
		rowB, colB = n, k
	}
	if ldb < max(1, colB) {
		panic(badLdB)
	}
	if k > 0 && n > 0 && len(b) < ldb*(rowB-1)+colB {
		panic(shortB)
	}
	p := &PackedB{k: k, n: n}
	if k == 0 || n == 0 {
		return p
	}
	p.kStep = kStep(k)
	np := (n + nr - 1) / nr
	p.panels = make([]float32, k*np*nr)
	for p0 := 0; p0 < k; p0 += p.kStep {
		packB(p.panels[p0*np*nr:], trans, b, ldb, p0, 0, min(p.kStep, k-p0), n)
	}
	return p
}

// Dims are op(B)'s k and n.
func (p *PackedB) Dims() (k, n int) { return p.k, p.n }

// Gemm computes C = alpha * op(A) * B + beta * C, as Sgemm with this B: op(A) is m x k, C
// is m x n with row stride ldc. It runs on the calling goroutine.
func (p *PackedB) Gemm(tA blas.Transpose, m int, alpha float32, a []float32, lda int, beta float32, c []float32, ldc int) {
	p.GemmColumns(tA, m, alpha, a, lda, beta, c, ldc, 0, p.n)
}

// GemmColumns computes columns j0..j1-1 of Gemm's C and leaves the others, so that
// goroutines can share one PackedB, each computing its own columns: j0 must be a multiple
// of ColumnAlign, and j1 one too or n. c is still all of C (its column 0 at c[0]).
func (p *PackedB) GemmColumns(tA blas.Transpose, m int, alpha float32, a []float32, lda int, beta float32, c []float32, ldc int, j0, j1 int) {
	p.gemmColumns(bestKernels(), tA, m, alpha, a, lda, beta, c, ldc, j0, j1)
}

// ColumnAlign is the column granularity of GemmColumns: the micro-panel width.
const ColumnAlign = nr

// gemmColumns is GemmColumns with the micro-kernels kerns.
func (p *PackedB) gemmColumns(kerns kernels, tA blas.Transpose, m int, alpha float32, a []float32, lda int, beta float32, c []float32, ldc int, j0, j1 int) {
	if !validTranspose(tA) {
		panic(badTranspose)
	}
	if m < 0 {
		panic(mLT0)
	}
	if j0 < 0 || j0 > j1 || j1 > p.n || j0%nr != 0 || (j1%nr != 0 && j1 != p.n) {
		panic("sgemm: bad column range")
	}
	transA := tA != blas.NoTrans
	k, n := p.k, p.n
	rowA, colA := m, k
	if transA {
		rowA, colA = k, m
	}
	switch {
	case lda < max(1, colA):
		panic(badLdA)
	case ldc < max(1, n):
		panic(badLdC)
	}
	if m == 0 || j0 == j1 {
		return
	}
	switch {
	case len(a) < lda*(rowA-1)+colA && k > 0:
		panic(shortA)
	case len(c) < ldc*(m-1)+n:
		panic(shortC)
	}
	if alpha == 0 || k == 0 {
		scale(m, j1-j0, beta, c[j0:], ldc)
		return
	}

	buf := getBuffers()
	defer putBuffers(buf)
	np := (n + nr - 1) / nr
	for p0 := 0; p0 < k; p0 += p.kStep {
		kb := min(p.kStep, k-p0)
		bpack := p.panels[p0*np*nr+j0*kb:] // micro-panel j0/nr of this block
		rankUpdate(kerns, buf, panelsB{packed: bpack}, transA, a, lda, m, p0, kb, j1-j0, alpha, beta, c[j0:], ldc)
	}
}
