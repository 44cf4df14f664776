// Package kernel is lipformer's compute on plain row-major slices, outside any graph: the
// matrix products of the build's BLAS (Gemm, Gemv and packed weights), the row kernels of
// the ops (LayerNorm, the ball norm, softmax, GELU, ELU, cross-entropy, sums), the attention step of an
// incremental decoder (DotRows, WeightedRowSum) and the parallel loop they share. Package
// ops wraps them as Gorgonia operations and model's decoder calls them directly, so that
// both compute the same values.
//
// Matrices are row-major with the given row strides; a batch of B sequences of T tokens
// of width D is a (B*T, D) matrix, row b*T+t holding token t of sequence b. Functions that
// work in parallel use at most GOMAXPROCS goroutines and return when all are done; their
// results do not depend on the number of goroutines. In float32 the hot kernels run AVX2/FMA
// assembly on amd64 processors that have both and portable Go elsewhere; each is tested
// against a plain-Go reference. docs/performance.md explains the choices and their
// measurements.
package kernel
