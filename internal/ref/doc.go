// Package ref holds plain-Go float64 reference implementations of the
// building blocks of lipformer (softmax, LayerNorm, GELU, linear maps,
// cross-entropy and the attention variants of docs/math.md, "Attention" and "Bounds of tied L2 attention").
//
// They exist to test the graph layers against. They are written with explicit
// loops over tokens i, j, heads h and features, following docs/math.md literally, and
// depend on no graph code. Speed is not a goal.
//
// Data layout:
//   - A sequence X is a [][]float64 with N rows (tokens) of D features each,
//     so X[i][k] is feature k of token i. Rows must all have the same length.
//   - A weight matrix is a *mat.Dense acting on rows: y_i = x_i W with
//     W (Din, Dout). Per-head projections W^{Q,h}, W^{K,h}, W^{V,h} are given
//     as a []*mat.Dense of H matrices, each (D, d) with d = D/H; the output
//     projection W^O is (D, D).
//
// Every function validates its arguments and returns an error naming the
// offending argument and shape; none panics on bad input.
package ref
