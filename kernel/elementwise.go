package kernel

// Add writes y = a + b elementwise, in parallel chunks. y may be a or b.
func Add[T Float](y, a, b []T) {
	ParallelFor(len(a), 1, func(_, lo, hi int) { AddSerial(y[lo:hi], a[lo:hi], b[lo:hi]) })
}

// AddSerial is Add on the calling goroutine, for callers that already run one job per
// core: float32 in AVX2 where the processor has it, each sum rounded once either way.
func AddSerial[T Float](y, a, b []T) {
	n := 0
	if y32, ok := any(y).([]float32); ok {
		n = addVec(y32, any(a).([]float32), any(b).([]float32))
	}
	ar, br, yr := a[n:], b[n:len(a)], y[n:len(a)]
	for i, v := range ar {
		yr[i] = v + br[i]
	}
}

// Mul writes y = a * b elementwise, in parallel chunks. y may be a or b.
func Mul[T Float](y, a, b []T) {
	ParallelFor(len(a), 1, func(_, lo, hi int) {
		ar, br, yr := a[lo:hi], b[lo:hi], y[lo:hi]
		for i, v := range ar {
			yr[i] = v * br[i]
		}
	})
}

// AddBias writes y = x + b for every row of x (width len(b)), in parallel over rows. y may
// be x.
func AddBias[T Float](y, x, b []T) {
	d := len(b)
	ParallelFor(len(x)/d, d, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			yr, xr := y[r*d:(r+1)*d], x[r*d:(r+1)*d]
			for j, v := range xr {
				yr[j] = v + b[j]
			}
		}
	})
}

// FillRows writes b into every row of y (width len(b)), in parallel over rows: the start
// of a product with a bias, which then adds into y.
func FillRows[T Float](y, b []T) {
	d := len(b)
	ParallelFor(len(y)/d, d, func(_, lo, hi int) { FillRowsSerial(y[lo*d:hi*d], b) })
}

// FillRowsSerial is FillRows on the calling goroutine.
func FillRowsSerial[T Float](y, b []T) {
	for r := 0; r+len(b) <= len(y); r += len(b) {
		copy(y[r:r+len(b)], b)
	}
}

// Scale writes y = s x elementwise, on the calling goroutine: float32 in AVX2 where the
// processor has it, bit for bit the portable loop's. y may be x.
func Scale[T Float](y, x []T, s T) {
	n := 0
	if y32, ok := any(y).([]float32); ok {
		n = scaleVec(y32, any(x).([]float32), any(s).(float32))
	}
	xr, yr := x[n:], y[n:len(x)]
	for i, v := range xr {
		yr[i] = s * v
	}
}

// SubScaled writes y = y - f x elementwise, each product rounded before the difference:
// float32 in AVX2 where the processor has it, bit for bit the portable loop's.
func SubScaled[T Float](y, x []T, f T) {
	n := 0
	if y32, ok := any(y).([]float32); ok {
		n = subScaledVec(y32, any(x).([]float32), any(f).(float32))
	}
	xr, yr := x[n:], y[n:len(x)]
	for i, v := range xr {
		yr[i] -= f * v
	}
}

// ScaleDiffWide writes y = s (g - v f) elementwise, each product v f taken in float64 and
// rounded once to T, the difference and the scaling in T: float32 in AVX2 where the
// processor has it, bit for bit the portable loop's. y may be g. It is a row of the
// gradient of spectral normalisation (ops.SpectralNormalize).
func ScaleDiffWide[T Float](y, g, v []T, f float64, s T) {
	n := 0
	if y32, ok := any(y).([]float32); ok {
		n = scaleDiffWideVec(y32, any(g).([]float32), any(v).([]float32), f, any(s).(float32))
	}
	vr, gr, yr := v[n:], g[n:len(v)], y[n:len(v)]
	for i, x := range vr {
		yr[i] = s * (gr[i] - T(float64(x)*f))
	}
}

// ScaleWide writes y = x f elementwise, each product taken in float64 and rounded once to
// T: float32 in AVX2 where the processor has it, bit for bit the portable loop's. y may
// be x.
func ScaleWide[T Float](y, x []T, f float64) {
	n := 0
	if y32, ok := any(y).([]float32); ok {
		n = scaleWideVec(y32, any(x).([]float32), f)
	}
	xr, yr := x[n:], y[n:len(x)]
	for i, v := range xr {
		yr[i] = T(float64(v) * f)
	}
}
