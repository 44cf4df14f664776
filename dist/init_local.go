//go:build !mpi

package dist

// Init returns [Local]: without the build tag mpi every process is a job of its own.
func Init() (Comm, error) { return Local(), nil }
