//go:build openblas

// Package openblas holds the cgo calls into OpenBLAS that gonum's netlib wrapper does not
// make. It is its own package because a package that uses cgo cannot also hold Go
// assembly, and lipformer/ops does.
package openblas

/*
#cgo LDFLAGS: -lopenblas
void openblas_set_num_threads(int);
*/
import "C"

// SetThreads sets the number of threads OpenBLAS runs each call on.
func SetThreads(n int) { C.openblas_set_num_threads(C.int(n)) }
