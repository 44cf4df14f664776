package kernel

// Dot is the inner product of a and b (len(a) elements), accumulated in float64.
func Dot[T Float](a, b []T) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// Bilinear is u^T W v for a row-major W (len(u), cols) and v (cols), accumulated in
// float64: each row's W_i v summed left to right, then u_i W_i v added row after row. Four
// rows' sums run side by side, so that they do not wait on each other.
func Bilinear[T Float](w, u, v []T, cols int) float64 {
	var s float64
	i := 0
	for ; i+4 <= len(u); i += 4 {
		w0, w1, w2, w3 := w[i*cols:][:len(v)], w[(i+1)*cols:][:len(v)], w[(i+2)*cols:][:len(v)], w[(i+3)*cols:][:len(v)]
		var r0, r1, r2, r3 float64
		for j, vj := range v {
			x := float64(vj)
			r0 += float64(w0[j]) * x
			r1 += float64(w1[j]) * x
			r2 += float64(w2[j]) * x
			r3 += float64(w3[j]) * x
		}
		s += float64(u[i]) * r0
		s += float64(u[i+1]) * r1
		s += float64(u[i+2]) * r2
		s += float64(u[i+3]) * r3
	}
	for ; i < len(u); i++ {
		var r float64
		for j, vj := range v {
			r += float64(w[i*cols+j]) * float64(vj)
		}
		s += float64(u[i]) * r
	}
	return s
}
