//go:build mpi

package dist

/*
#cgo pkg-config: mpi
#include <mpi.h>

// The MPI handles are macros (addresses of library objects in Open MPI), which cgo
// cannot name: these wrappers take the place of the few calls used.
static int lf_init(int *provided) {
	return MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, provided);
}
static int lf_rank(int *r) { return MPI_Comm_rank(MPI_COMM_WORLD, r); }
static int lf_size(int *s) { return MPI_Comm_size(MPI_COMM_WORLD, s); }
static int lf_sum_f64(double *buf, int n) {
	return MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}
static int lf_sum_f32(float *buf, int n) {
	return MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}
static int lf_bcast(void *buf, int n, int root) {
	return MPI_Bcast(buf, n, MPI_BYTE, root, MPI_COMM_WORLD);
}
static int lf_barrier(void) { return MPI_Barrier(MPI_COMM_WORLD); }
static int lf_abort(int code) { return MPI_Abort(MPI_COMM_WORLD, code); }
static int lf_finalize(void) { return MPI_Finalize(); }
static int lf_thread_serialized(void) { return MPI_THREAD_SERIALIZED; }
static int lf_success(void) { return MPI_SUCCESS; }
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"
)

// chunk is the most elements one MPI call moves: MPI counts are C ints.
const chunk = 1 << 30

// Init initialises MPI (MPI_Init_thread, at least MPI_THREAD_SERIALIZED, since
// goroutines move between threads) and returns the communicator of all the processes
// mpirun started (MPI_COMM_WORLD); a process started without mpirun is a job of one.
// MPI's default error handler stays in place: an MPI error ends the whole job. Call it
// once per process.
func Init() (Comm, error) {
	var provided C.int
	if rc := C.lf_init(&provided); rc != C.lf_success() {
		return nil, fmt.Errorf("dist: MPI_Init_thread failed with code %d", int(rc))
	}
	if provided < C.lf_thread_serialized() {
		C.lf_finalize()
		return nil, errors.New("dist: the MPI library does not support MPI_THREAD_SERIALIZED, which Go's threads need")
	}
	var rank, size C.int
	if err := check("MPI_Comm_rank", C.lf_rank(&rank)); err != nil {
		return nil, err
	}
	if err := check("MPI_Comm_size", C.lf_size(&size)); err != nil {
		return nil, err
	}
	return &world{rank: int(rank), size: int(size)}, nil
}

// world is MPI_COMM_WORLD. The mutex serialises the calls, as MPI_THREAD_SERIALIZED asks.
type world struct {
	mu         sync.Mutex
	rank, size int
}

// Rank returns this process's rank in MPI_COMM_WORLD.
func (w *world) Rank() int { return w.rank }

// Size returns the number of processes in MPI_COMM_WORLD.
func (w *world) Size() int { return w.size }

// SumFloat64 is MPI_Allreduce in place with MPI_SUM over MPI_DOUBLE.
func (w *world) SumFloat64(buf []float64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(buf) > 0 {
		n := min(len(buf), chunk)
		if err := check("MPI_Allreduce", C.lf_sum_f64((*C.double)(unsafe.Pointer(&buf[0])), C.int(n))); err != nil {
			return err
		}
		buf = buf[n:]
	}
	return nil
}

// SumFloat32 is MPI_Allreduce in place with MPI_SUM over MPI_FLOAT.
func (w *world) SumFloat32(buf []float32) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(buf) > 0 {
		n := min(len(buf), chunk)
		if err := check("MPI_Allreduce", C.lf_sum_f32((*C.float)(unsafe.Pointer(&buf[0])), C.int(n))); err != nil {
			return err
		}
		buf = buf[n:]
	}
	return nil
}

// Bcast is MPI_Bcast of MPI_BYTE from root.
func (w *world) Bcast(buf []byte, root int) error {
	if err := checkRoot(root, w.size); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(buf) > 0 {
		n := min(len(buf), chunk)
		if err := check("MPI_Bcast", C.lf_bcast(unsafe.Pointer(&buf[0]), C.int(n), C.int(root))); err != nil {
			return err
		}
		buf = buf[n:]
	}
	return nil
}

// Barrier is MPI_Barrier.
func (w *world) Barrier() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return check("MPI_Barrier", C.lf_barrier())
}

// Abort is MPI_Abort: mpirun ends every process of the job.
func (w *world) Abort(code int) {
	C.lf_abort(C.int(code))
}

// Finalize is MPI_Finalize.
func (w *world) Finalize() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return check("MPI_Finalize", C.lf_finalize())
}

// check turns the return code of the MPI call name into an error.
func check(name string, rc C.int) error {
	if rc != C.lf_success() {
		return fmt.Errorf("dist: %s failed with code %d", name, int(rc))
	}
	return nil
}
