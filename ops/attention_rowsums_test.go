package ops

import "testing"

// TestRowColSumsMatchLoops: rowColSums equals, bit for bit in float32, the sums taken one
// row after another, on 11 rows (not a multiple of two) of a causal geometry with blocks
// of 4 rows.
func TestRowColSumsMatchLoops(t *testing.T) {
	const rows = 11
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
