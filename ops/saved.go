package ops

// A saved result is what one op of a graph computes for other ops of the same run to
// reuse instead of recomputing it: the P of a forward attention op, read by its backward;
// the per-job bias sums of that backward, read by the bias gradient; the factors of the
// token2, kim and product bounds, read by their gradient ops (keptFactors). The writer and its readers share the result
// through an object made when the graph is built (in SymDiff), never through a key such as
// a tensor's address.
//
// Two rules make a read correct by construction:
//   - every reader takes the writer's output, or a value computed from it, as an input,
//     so in every run of the graph the writer runs before the reader, and on the same input
//     nodes (the tape machine runs each node once per run, after its inputs);
//   - the writer numbers its completed writes (saved), and a reader uses a result only if
//     it was completed since that reader's last read (reader.take). With the first rule
//     that is the write of the current run; a result of an earlier run (a reader called
//     again without its writer, after its inputs were changed in place) is refused, and
//     the reader recomputes, or fails when it cannot.
//
// Within a run the readers rely, as every op does, on their inputs not being rewritten
// between the writer and them: the ops of this package overwrite no input.
type saved struct {
	gen  uint64 // writes completed so far
	busy bool   // a write has begun and not completed
}

// begin marks the start of a write: until done, no reader takes the result.
func (s *saved) begin() { s.busy = true }

// done marks the write complete, as a new generation.
func (s *saved) done() { s.busy, s.gen = false, s.gen+1 }

// reader is a reading op's record of the last write it took.
type reader struct{ seen uint64 }

// take reports whether s holds a completed write that r has not taken yet, and records it
// as taken.
func (r *reader) take(s *saved) bool {
	if s.busy || s.gen == 0 || s.gen == r.seen {
		return false
	}
	r.seen = s.gen
	return true
}

// keptFactors holds the factors of a bound's last run, of its inputs' element type: a
// differentiated bound (the token2, kim and product bounds) shares one with its gradient
// ops, which reuse the factors of their own run instead of recomputing them.
type keptFactors struct {
	factors any
	done    saved
}

// keep records f as the factors of a completed run.
func (k *keptFactors) keep(f any) {
	k.done.begin()
	k.factors = f
	k.done.done()
}

// take returns the factors of a run that r has not taken yet (reader.take), or nil when
// there are none, or k is nil.
func (k *keptFactors) take(r *reader) any {
	if k == nil || !r.take(&k.done) {
		return nil
	}
	return k.factors
}
