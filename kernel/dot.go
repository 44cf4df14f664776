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
// float64.
func Bilinear[T Float](w, u, v []T, cols int) float64 {
	var s float64
	for i, ui := range u {
		var r float64
		for j, vj := range v {
			r += float64(w[i*cols+j]) * float64(vj)
		}
		s += float64(ui) * r
	}
	return s
}
