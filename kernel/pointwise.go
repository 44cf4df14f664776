package kernel

// mapChunks writes y = f(x) elementwise in parallel chunks: by f32 for float32 slices,
// by f in float64 otherwise.
func mapChunks[T Float](y, x []T, f func(float64) float64, f32 func(y, x []float32)) {
	ParallelFor(len(x), 1, func(_, lo, hi int) { mapSerial(y[lo:hi], x[lo:hi], f, f32) })
}

// mapSerial is mapChunks on the calling goroutine.
func mapSerial[T Float](y, x []T, f func(float64) float64, f32 func(y, x []float32)) {
	if y32, ok := any(y).([]float32); ok {
		f32(y32, any(x).([]float32))
		return
	}
	for i, v := range x {
		y[i] = T(f(float64(v)))
	}
}

// chainChunks writes dx = dy * df(x) elementwise in parallel chunks: by df32 for float32
// slices, by df in float64 otherwise.
func chainChunks[T Float](dx, x, dy []T, df func(float64) float64, df32 func(dx, x, dy []float32)) {
	ParallelFor(len(x), 1, func(_, lo, hi int) { chainSerial(dx[lo:hi], x[lo:hi], dy[lo:hi], df, df32) })
}

// chainSerial is chainChunks on the calling goroutine.
func chainSerial[T Float](dx, x, dy []T, df func(float64) float64, df32 func(dx, x, dy []float32)) {
	if dx32, ok := any(dx).([]float32); ok {
		df32(dx32, any(x).([]float32), any(dy).([]float32))
		return
	}
	for i, v := range x {
		dx[i] = T(float64(dy[i]) * df(float64(v)))
	}
}
