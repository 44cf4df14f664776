// Package ops holds the custom Gorgonia operations of lipformer: fused kernels with
// hand-written backward passes, in float32 and float64, that are numerically safe where
// Gorgonia's own operations are not (see GORGONIA.md in the shared folder).
//
// Every forward op is an SDOp whose SymDiff returns backward ops of this package; the
// backward ops are not themselves differentiable (Gorgonia's nested Grad is wrong anyway).
// Ops write into preallocated outputs when the tape machine offers a buffer of the right
// shape that does not alias an input.
//
// Activations are 2-D: a batch of B sequences of T tokens of width D is a (B*T, D) matrix,
// row b*T+t holding token t of sequence b.
package ops
