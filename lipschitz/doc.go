// Package lipschitz computes Lipschitz constants and upper bounds of the
// building blocks of lipformer as functions of their weights (docs/math.md
// and 2): the L2 multihead attention bounds of Kim et al. (2021), exact
// constants of linear maps, LayerNorm and GELU, matrix norms, the Lambert W
// function those bounds need, and finite-difference Jacobians to check them.
//
// Conventions follow docs/math.md: a sequence X is (N, D) with rows as tokens, linear
// maps act on rows (y = x W, W (D, d)), and norms of a sequence are norms of
// vec(X), its row-major flattening (index i*D+k). A Jacobian is therefore
// (ND, ND); ||J||_inf is its largest absolute row sum and ||J||_2 its largest
// singular value. Everything is float64.
package lipschitz
