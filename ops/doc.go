// Package ops holds the custom Gorgonia operations of lipformer: fused kernels with
// hand-written backward passes, in float32 and float64, that are numerically safe where
// Gorgonia's own operations are not (docs/gorgonia.md).
//
// Every forward op is an SDOp whose SymDiff returns backward ops of this package; the
// backward ops are not themselves differentiable (Gorgonia's nested Grad is wrong anyway).
//
// Memory: the tape machine forgets every register on Reset and never offers a buffer to
// ops that do not call external code, so each op keeps its output tensor and overwrites it
// on every run (a buffer the machine does offer is used instead when it fits): after the
// first step a training step allocates only Gorgonia's bookkeeping. A node's value is
// therefore valid until the next run of its graph; copy what must outlive it. Scratch
// memory is kept in the op too, and an op belongs to one graph, run by one machine at a
// time. Linear (packed projections without a concatenated copy of the weights) and Add
// replace G.Mul, G.Concat and G.Add, which allocate on every run. A differentiated
// attention op also keeps its attention probabilities, (B*H, T, T), for its backward
// (8 MiB per layer at batch 8, T 256, 4 heads, float32); evaluation graphs do not.
//
// Parallelism: kernels split rows or elements across at most GOMAXPROCS goroutines, and
// take sums across rows per fixed block of rows, so that their results do not depend on
// the number of goroutines. The attention kernel runs one (sequence, head) job at a time
// per goroutine with single-threaded matrix products, and skips the masked blocks of
// causal attention.
//
// Speed: in float32 the hot elementwise functions (GELU and its derivative, ELU, the
// exponential of softmax and cross-entropy), softmax's maximum and sum and LayerNorm's row
// sums run AVX2/FMA kernels in Go assembly on amd64 processors that have both
// (fastmath_amd64.s, rowsums_amd64.s), and portable Go loops elsewhere and on the last few
// elements; both are tested against the exact float64 functions. PackWeights and
// GemmPacked (GemmPackedSerial on the calling goroutine) serve products that apply the same
// weights to new rows many times, and DotRows and WeightedRowSum (rowdots_amd64.s) one
// query row against cached rows: the decoder's.
//
// Activations are 2-D: a batch of B sequences of T tokens of width D is a (B*T, D) matrix,
// row b*T+t holding token t of sequence b.
package ops
