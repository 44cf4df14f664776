// Package layers builds the graph nodes of lipformer's layers — Linear, Embedding,
// LayerNorm and the ball norm, its certified substitute, MLP, dot-product and L2 multihead self-attention, and the transformer block;
// spectral normalisation, the spectrally normalised MLP and the invertible block
// (docs/math.md, "Contraction and inversion") — over parameters that are shared by every graph built from them, and reports
// their Lipschitz constants or bounds (docs/math.md).
//
// Activations are 2-D: a batch of B sequences of T tokens of width D is a (B*T, D) matrix.
// A layer is a plain struct of *Param; its Forward method adds nodes to a *Graph.
package layers
