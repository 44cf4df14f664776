// Package dist is the communicator of synchronous data-parallel training: the ranks of a
// job, all-reduced sums and broadcasts over them, and aborting them all. The default
// build has only the single-process communicator ([Local]); built with the tag mpi,
// [Init] joins the job that mpirun started, through a thin cgo binding of the MPI calls
// it needs (docs/distributed.md).
package dist
