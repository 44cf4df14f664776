package train

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"lipformer/data"
	"lipformer/dist"
	"lipformer/spec"
)

// A run of several replicas (docs/distributed.md) is synchronous data parallelism over
// the ranks of Run.Comm: Options.Batch is the batch of the whole job, and rank r trains
// on rows r*B to (r+1)*B-1 of it, B = Batch/Size, which the seeded sampler draws as it
// draws them for one process. The gradients and the loss are summed over the replicas and
// divided by their number before clipping and the AdamW step, so every replica takes the
// step of one process with the whole batch and the replicas hold the same weights. Rank
// 0 alone writes the run directory; each replica scores its share of the evaluation
// windows and the sums are reduced. Every decision to stop (an interrupt, a non-finite
// value) is taken on reduced values, so the replicas stop at the same step.

// ErrReplicasDiffer is returned when the weights of the replicas of a job differ.
var ErrReplicasDiffer = errors.New("the replicas' weights differ")

// comm is the run's communicator: Run.Comm, or a job of one process when it is nil.
func (r *Run) comm() dist.Comm {
	if r.Comm == nil {
		return dist.Local()
	}
	return r.Comm
}

// dispatch trains with the element type of the model's parameters.
func (r *Run) dispatch(ctx context.Context) (*Summary, error) {
	switch r.Model.Cfg.Dtype {
	case spec.Float64:
		return train[float64](ctx, r)
	default:
		return train[float32](ctx, r)
	}
}

// replicaBatch returns the rows of the job's batch that one replica trains on.
func (r *Run) replicaBatch() (int, error) {
	n := r.comm().Size()
	if r.Opt.Batch%n != 0 {
		return 0, fmt.Errorf("batch %d is not a multiple of the %d replicas of the job: each takes an equal share", r.Opt.Batch, n)
	}
	return r.Opt.Batch / n, nil
}

// replicaSeed is the dropout seed of replica rank: seed itself on rank 0, so that a job of
// one process draws the masks of a plain run, and a scrambled one on the others, so that
// the replicas do not draw the same masks for different rows.
func replicaSeed(seed uint64, rank int) uint64 {
	if rank == 0 {
		return seed
	}
	return seed ^ (0x9e3779b97f4a7c15 * uint64(rank))
}

// lead reports whether this process writes the run directory: rank 0.
func (t *trainer[T]) lead() bool { return t.comm().Rank() == 0 }

// openMetrics opens the metrics log of the run directory on rank 0; the other ranks
// write their rows nowhere.
func (t *trainer[T]) openMetrics() (*MetricsWriter, error) {
	if !t.lead() {
		return NewMetricsWriter(io.Discard), nil
	}
	return OpenMetrics(t.Out)
}

// writeSummary writes sum to the run directory on rank 0.
func (t *trainer[T]) writeSummary(sum *Summary) error {
	if !t.lead() {
		return nil
	}
	return sum.write(t.Out)
}

// interrupted reports whether ctx is cancelled on any replica, the same answer on all.
func (t *trainer[T]) interrupted(ctx context.Context) (bool, error) {
	c := t.comm()
	if c.Size() == 1 {
		return ctx.Err() != nil, nil
	}
	flag := []float64{0}
	if ctx.Err() != nil {
		flag[0] = 1
	}
	if err := c.SumFloat64(flag); err != nil {
		return false, err
	}
	return flag[0] > 0, nil
}

// sample fills the training program's inputs and targets with this replica's rows of
// batch number step.
func (t *trainer[T]) sample(s *data.Sampler[uint8], step int) error {
	first := t.comm().Rank() * t.st.Prog.Graph.Batch
	return s.Rows(step, first, t.st.Prog.Inputs, t.st.Prog.Targets)
}

// evaluate is Evaluate over the replicas, reported as what: replica r scores the batches of windows r,
// r+Size, r+2*Size, ... and the nats and bytes are summed over the replicas. A process
// alone checks ctx between batches; replicas do not, since one that stopped alone would
// leave the others waiting in the sum (they stop at the next step's interrupt check).
func (t *trainer[T]) evaluate(ctx context.Context, tokens []uint8, what string) (Score, error) {
	c := t.comm()
	p := t.eval
	if c.Size() == 1 {
		return EvaluateScore(ctx, p, tokens, p.Graph.SeqLen, t.rep.Evaluation(what))
	}
	w, err := data.NewEvalWindows(tokens, p.Graph.SeqLen, p.Graph.Batch)
	if err != nil {
		return Score{}, err
	}
	s, err := evaluateShare(context.Background(), p, w, c.Rank(), c.Size(), t.rep.Evaluation(what))
	if err != nil {
		return Score{}, err
	}
	sums := []float64{s.Nats, float64(s.Scored), float64(s.Hits)} // nats, bytes scored, hits
	if err := c.SumFloat64(sums); err != nil {
		return Score{}, err
	}
	if int(sums[1]) != w.Scored() {
		return Score{}, fmt.Errorf("evaluate: the replicas scored %v bytes, want %d", sums[1], w.Scored())
	}
	return Score{Nats: sums[0] / sums[1], Scored: w.Scored(), Hits: int(sums[2])}, nil
}

// checkReplicas returns an error wrapping ErrReplicasDiffer, on every replica, when the
// parameters, buffers or optimizer moments of a replica differ in a bit from rank 0's.
func (t *trainer[T]) checkReplicas(when string) error {
	c := t.comm()
	if c.Size() == 1 {
		return nil
	}
	own := t.fingerprint()
	root := binary.LittleEndian.AppendUint64(nil, own)
	if err := c.Bcast(root, 0); err != nil {
		return err
	}
	differ := []float64{0}
	if own != binary.LittleEndian.Uint64(root) {
		differ[0] = 1
	}
	if err := c.SumFloat64(differ); err != nil {
		return err
	}
	if differ[0] > 0 {
		return fmt.Errorf("%s: %v of %d replicas: %w", when, differ[0], c.Size(), ErrReplicasDiffer)
	}
	return nil
}

// fingerprint hashes the bits of the model's parameters and buffers and of the
// optimizer's moments (FNV-1a over 64-bit words).
func (t *trainer[T]) fingerprint() uint64 {
	h := uint64(14695981039346656037)
	mix := func(v []T) {
		for _, x := range v {
			h = (h ^ math.Float64bits(float64(x))) * 1099511628211
		}
	}
	for _, p := range t.Model.Params() {
		v, _ := p.Value.Data().([]T)
		mix(v)
	}
	for _, b := range t.Model.Buffers() {
		v, _ := b.Value.Data().([]T)
		mix(v)
	}
	for i := range t.st.Adam.m {
		mix(t.st.Adam.m[i])
		mix(t.st.Adam.v[i])
	}
	return h
}
