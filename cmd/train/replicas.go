package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"lipformer/dist"
	"lipformer/train"
)

// run is runOn in a job of one process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runOn(ctx, dist.Local(), args, stdout, stderr)
}

// quiet returns the output streams of a replica: stdout and stderr on rank 0, nothing on
// the others, whose summaries, logs and usage messages would repeat rank 0's. (main
// prints the error of every rank.)
func quiet(comm dist.Comm, stdout, stderr io.Writer) (io.Writer, io.Writer) {
	if comm.Rank() != 0 {
		return io.Discard, io.Discard
	}
	return stdout, stderr
}

// replicate makes r one of the replicas of comm: only rank 0 draws the progress bar and
// certifies the final weights (docs/distributed.md).
func replicate(r *train.Run, comm dist.Comm) {
	r.Comm = comm
	if comm.Rank() != 0 {
		r.Progress, r.Certify = nil, false
	}
}

// errorPrefix names the process in its error message: "train" alone, or with its rank in
// a job of several.
func errorPrefix(comm dist.Comm) string {
	if comm.Size() == 1 {
		return "train"
	}
	return fmt.Sprintf("train (rank %d of %d)", comm.Rank(), comm.Size())
}

// leave ends the process's part in the job of comm after runOn returned err. Every
// replica meets a stop that the replicas agree on (an interrupt, a non-finite value,
// differing replicas) and returns with the others, so it finalizes MPI; any other error
// is this process's alone, and while the others wait for it in a collective call, it
// aborts the whole job with the exit status code (MPI_Abort does not return).
func leave(comm dist.Comm, err error, code int) {
	agreed := err == nil || errors.Is(err, train.ErrNonFinite) || errors.Is(err, train.ErrReplicasDiffer)
	if comm.Size() > 1 && !agreed {
		comm.Abort(code)
	}
	if err := comm.Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, errorPrefix(comm)+":", err)
	}
}
