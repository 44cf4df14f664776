package ops

import "testing"

// TestRowDotsAndRowColSumsMatchLoops: rowDots and rowColSums equal, bit for bit in float32,
// the sums taken one row after another, on 11 rows (not a multiple of four or two) of a
// causal geometry with blocks of 4 rows.
func TestRowDotsAndRowColSumsMatchLoops(t *testing.T) {
	const rows, ld, n = 11, 13, 9
	a, b := make([]float32, rows*ld), make([]float32, rows*ld)
	for i := range a {
		a[i], b[i] = float32(i%7)*0.37-1.1+float32(i)*1e-3, float32(i%5)*0.61-0.9
	}
	got := make([]float32, rows)
	rowDots(got, a, b, ld, n)
	for i := range rows {
		var want float32
		for j := range n {
			want += a[i*ld+j] * b[i*ld+j]
		}
		if got[i] != want {
			t.Fatalf("rowDots [%d]: got %.9g, want %.9g", i, got[i], want)
		}
	}

	g := attnGeometry{spec: AttentionSpec{SeqLen: rows, Causal: true}, block: 4}
	m := make([]float32, rows*rows)
	for i := range m {
		m[i] = float32(i%9)*0.29 - 1.3 + float32(i)*1e-4
	}
	r, c := make([]float32, rows), make([]float32, rows)
	rowColSums(g, r, c, m)
	wr, wc := make([]float32, rows), make([]float32, rows)
	for bi := range g.blocks() {
		lo, hi := g.blockRows(bi)
		for i := lo; i < hi; i++ {
			for j := range g.seen(bi) {
				wr[i] += m[i*rows+j]
				wc[j] += m[i*rows+j]
			}
		}
	}
	for i := range rows {
		if r[i] != wr[i] || c[i] != wc[i] {
			t.Fatalf("rowColSums [%d]: rows %.9g and columns %.9g, want %.9g and %.9g", i, r[i], c[i], wr[i], wc[i])
		}
	}
}

// TestRowDots64MatchesLoop: rowDots64 equals, bit for bit, the float64 sums taken one row
// after another, for 7 rows (not a multiple of four) of a strided float32 matrix with a
// float64 vector.
func TestRowDots64MatchesLoop(t *testing.T) {
	const rows, ld, n = 7, 10, 6
	a, x := make([]float32, rows*ld), make([]float64, n)
	for i := range a {
		a[i] = float32(i%11)*0.43 - 2.1 + float32(i)*1e-3
	}
	for j := range x {
		x[j] = 0.1*float64(j) - 0.77
	}
	got := make([]float64, rows)
	rowDots64(got, a, ld, x)
	for i := range rows {
		var want float64
		for j := range n {
			want += float64(a[i*ld+j]) * x[j]
		}
		if got[i] != want {
			t.Fatalf("[%d]: got %.17g, want %.17g", i, got[i], want)
		}
	}
}
