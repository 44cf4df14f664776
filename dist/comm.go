package dist

import "fmt"

// Comm is a communicator over the Size processes (ranks) of a job, numbered 0 to
// Size-1. The collective calls (Allreduce, Bcast, Barrier) must be made by every rank in
// the same order with buffers of the same length, and block until all have made them.
// A Comm is safe for concurrent use, but collective calls are ordered, so one goroutine
// should make them.
type Comm interface {
	Rank() int // this process, in [0, Size)
	Size() int // the processes of the job, >= 1
	// SumFloat64 replaces every element of buf by its sum over the ranks.
	SumFloat64(buf []float64) error
	// SumFloat32 replaces every element of buf by its sum over the ranks, in float32.
	SumFloat32(buf []float32) error
	// Bcast replaces buf on every rank by buf of rank root.
	Bcast(buf []byte, root int) error
	// Barrier returns when every rank has called it.
	Barrier() error
	// Abort ends every process of the job with the exit status code; it does not return
	// when the job has more than one rank (Local's returns).
	Abort(code int)
	// Finalize leaves the job; every rank calls it once, after its last collective call.
	Finalize() error
}

// Sum replaces every element of buf by its sum over the ranks of c, in the precision of
// buf.
func Sum[T float32 | float64](c Comm, buf []T) error {
	switch b := any(buf).(type) {
	case []float64:
		return c.SumFloat64(b)
	case []float32:
		return c.SumFloat32(b)
	}
	return nil
}

// checkRoot reports a root rank outside a job of size ranks.
func checkRoot(root, size int) error {
	if root < 0 || root >= size {
		return fmt.Errorf("dist: root rank %d outside a job of %d ranks", root, size)
	}
	return nil
}
