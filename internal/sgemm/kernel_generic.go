package sgemm

// kernelGo is the portable micro-kernel: the kernel contract in plain Go, for processors
// without AVX2 and FMA and for other architectures. It computes the tile in blocks of
// 2 rows x 4 columns whose eight sums are local variables (registers, with the two values
// of A and four of B of a step: 14 of the 16 registers of amd64), one pass over the packed
// panels per block, for the first rows rows rounded up to even (mr is even).
func kernelGo(depth, rows int, ap, bp, c []float32, ldc int, beta float32) {
	ap, bp = ap[:depth*mr], bp[:depth*nr]
	for r := 0; r < rows; r += 2 {
		for q := 0; q < nr; q += 4 {
			var s00, s01, s02, s03, s10, s11, s12, s13 float32
			ia, ib := r, q
			for range depth {
				a := ap[ia : ia+2 : ia+2]
				b := bp[ib : ib+4 : ib+4]
				a0, a1 := a[0], a[1]
				b0, b1, b2, b3 := b[0], b[1], b[2], b[3]
				s00 += a0 * b0
				s01 += a0 * b1
				s02 += a0 * b2
				s03 += a0 * b3
				s10 += a1 * b0
				s11 += a1 * b1
				s12 += a1 * b2
				s13 += a1 * b3
				ia += mr
				ib += nr
			}
			row0 := (*[4]float32)(c[r*ldc+q:])
			row1 := (*[4]float32)(c[(r+1)*ldc+q:])
			if beta != 0 {
				s00 += beta * row0[0]
				s01 += beta * row0[1]
				s02 += beta * row0[2]
				s03 += beta * row0[3]
				s10 += beta * row1[0]
				s11 += beta * row1[1]
				s12 += beta * row1[2]
				s13 += beta * row1[3]
			}
			*row0 = [4]float32{s00, s01, s02, s03}
			*row1 = [4]float32{s10, s11, s12, s13}
		}
	}
}
