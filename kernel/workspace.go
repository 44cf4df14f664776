package kernel

// Workspace is scratch memory kept between calls: slices of either precision, one per
// worker goroutine. Its zero value is empty and ready to use; it must not be used by two
// calls at a time.
type Workspace struct {
	f32 [][]float32
	f64 [][]float64
}

// Scratch returns n kept slices of w of at least size elements of type T each, allocating
// only those missing or too short. Call it before starting the workers; worker i then uses
// slice i alone. The slices hold whatever an earlier call left in them.
func Scratch[T Float](w *Workspace, n, size int) [][]T {
	bufs, ok := any(&w.f32).(*[][]T)
	if !ok {
		bufs = any(&w.f64).(*[][]T)
	}
	for len(*bufs) < n {
		*bufs = append(*bufs, nil)
	}
	s := (*bufs)[:n]
	for i := range s {
		if len(s[i]) < size {
			s[i] = make([]T, size)
		}
	}
	return s
}
