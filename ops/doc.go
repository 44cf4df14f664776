// Package ops holds the custom Gorgonia operations of lipformer: fused ops with
// hand-written backward passes, in float32 and float64, that are numerically safe where
// Gorgonia's own operations are not (docs/gorgonia.md). Their compute on slices is package
// kernel's.
//
// Every forward op is an SDOp whose SymDiff returns backward ops of this package; the
// backward ops are not themselves differentiable (Gorgonia's nested Grad is wrong anyway).
//
// Each op keeps its output tensor and its scratch memory between runs and overwrites them on
// every run: a node's value is valid until the next run of its graph, so copy what must
// outlive it. An op belongs to one graph, run by one machine at a time. A differentiated
// attention op keeps its attention probabilities, (B*H, T, T), for its backward; evaluation
// graphs do not. Results do not depend on the number of goroutines. docs/performance.md
// explains these choices.
//
// Activations are 2-D: a batch of B sequences of T tokens of width D is a (B*T, D) matrix,
// row b*T+t holding token t of sequence b.
package ops
