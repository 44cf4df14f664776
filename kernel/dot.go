package kernel

// Dot is the inner product of a and b (len(a) elements), accumulated in float64 in four
// partial sums, of the elements i mod 4 = 0, 1, 2 and 3, added as (s0 + s1) + (s2 + s3):
// one running sum would make every addition wait for the one before, four times as long on
// a whole layer's activations (the contraction's gradient, ops.Contract). Float32 runs AVX2/FMA
// assembly where the processor has it, bit for bit the same sums (dotLanesAVX2).
func Dot[T Float](a, b []T) float64 {
	b = b[:len(a)]
	var lanes [4]float64
	i := dotLanesVec(a, b, &lanes)
	s0, s1, s2, s3 := lanes[0], lanes[1], lanes[2], lanes[3]
	for ; i+4 <= len(a); i += 4 {
		x, y := a[i:i+4:i+4], b[i:i+4:i+4]
		s0 += float64(x[0]) * float64(y[0])
		s1 += float64(x[1]) * float64(y[1])
		s2 += float64(x[2]) * float64(y[2])
		s3 += float64(x[3]) * float64(y[3])
	}
	for ; i < len(a); i++ {
		s0 += float64(a[i]) * float64(b[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// Bilinear is u^T W v for a row-major W (len(u), cols) and v (cols), accumulated in
// float64: each row's W_i v (MulVec64, 64 rows at a time), then u_i W_i v added row after
// row.
func Bilinear[T Float](w, u, v []T, cols int) float64 {
	var s float64
	var r [64]float64
	for i := 0; i < len(u); i += len(r) {
		k := min(len(r), len(u)-i)
		MulVec64(r[:k], w[i*cols:], cols, v)
		for j, x := range r[:k] {
			s += float64(u[i+j]) * x
		}
	}
	return s
}

// PairDots writes into out the dot products of the first n elements of the len(out) rows
// (stride ld) of a and b, row i of a with row i of b, each summed left to right in T;
// four rows run side by side so that their sums do not wait on each other.
func PairDots[T Float](out, a, b []T, ld, n int) {
	i := 0
	for ; i+4 <= len(out); i += 4 {
		a0, a1, a2, a3 := a[i*ld:][:n], a[(i+1)*ld:][:n], a[(i+2)*ld:][:n], a[(i+3)*ld:][:n]
		b0, b1, b2, b3 := b[i*ld:][:n], b[(i+1)*ld:][:n], b[(i+2)*ld:][:n], b[(i+3)*ld:][:n]
		var s0, s1, s2, s3 T
		for j, v := range a0 {
			s0 += v * b0[j]
			s1 += a1[j] * b1[j]
			s2 += a2[j] * b2[j]
			s3 += a3[j] * b3[j]
		}
		out[i], out[i+1], out[i+2], out[i+3] = s0, s1, s2, s3
	}
	for ; i < len(out); i++ {
		var s T
		for j, v := range a[i*ld:][:n] {
			s += v * b[i*ld+j]
		}
		out[i] = s
	}
}

// matVec64 writes into out the dot products, in float64, of the len(out) rows (stride ld)
// of a with x (len(x) elements each), each summed left to right; four rows run side by
// side so that their sums do not wait on each other: MulVec64's portable loop.
func matVec64[T, U Float](out []float64, a []T, ld int, x []U) {
	n, i := len(x), 0
	for ; i+4 <= len(out); i += 4 {
		a0, a1, a2, a3 := a[i*ld:][:n], a[(i+1)*ld:][:n], a[(i+2)*ld:][:n], a[(i+3)*ld:][:n]
		var s0, s1, s2, s3 float64
		for j, xj := range x {
			y := float64(xj)
			s0 += float64(a0[j]) * y
			s1 += float64(a1[j]) * y
			s2 += float64(a2[j]) * y
			s3 += float64(a3[j]) * y
		}
		out[i], out[i+1], out[i+2], out[i+3] = s0, s1, s2, s3
	}
	for ; i < len(out); i++ {
		var s float64
		for j, xj := range x {
			s += float64(a[i*ld+j]) * float64(xj)
		}
		out[i] = s
	}
}
