// Package search measures the Lipschitz constants of attention layers from below
// (Kim et al. 2021, section 5.1; docs/math.md, "Attention" and "Bounds of tied L2 attention"): exact Jacobians of a
// layer at an input, Jacobian-vector and vector-Jacobian products, and an
// empirical lower bound on Lip_inf or Lip_2 found by maximising ||J(X)||_p over
// inputs X with Adam from random starts (at the edge of the plateau around 0,
// each climbing again from its best input perturbed; start.go), optionally
// inside a box ||X||_inf <= R.
//
// Every ||J(X)||_p evaluated at any input X is a valid lower bound on the
// Lipschitz constant; the search reports the largest one it met.
//
// Two implementations of Map, the interface the search works on:
//   - GraphMap: any layers.Attention (dot-product, tied or untied L2; any
//     width D, heads H, length N; causal or not) through its Gorgonia graph.
//     The exact Jacobian comes from stacking copies of the sequence in a
//     batch and weighting copy k's output by the k-th unit vector, so that
//     one backward pass gives a block of rows; the rows are built in chunks
//     so that memory stays bounded.
//   - Scalar: D = H = 1 dot-product or tied L2 attention in closed form in
//     plain Go, much faster (O(N^2) per Jacobian), for the experiment of
//     Kim et al. at N up to thousands.
//
// The gradient of ||J(X)||_p with respect to X needs second derivatives, which
// Gorgonia's nested Grad computes wrongly (docs/gorgonia.md). Objective uses only
// first-order gradients: with i* the arg-max row of J and s = sign(J_{i*}),
// ||J||_inf = s . J_{i*} locally, whose gradient is the Hessian of F_{i*}
// applied to s; with (u, v) the top singular pair, ||J||_2 = u^T J v, whose
// gradient is the Hessian of u . F applied to v. Both Hessian-vector products
// are central differences of two exact gradients (vector-Jacobian products)
// along the direction, with error O(h^2). Between full Jacobians, Maximize can
// follow the last arg-max row or singular vector (Objective.Partial), whose
// value is still an exact lower bound, at O(N) per step for a Scalar.
//
// Vectors are vec(X), the row-major flattening of an (N, D) sequence (index
// i*D+k), as in package lipschitz. Everything is float64.
package search
