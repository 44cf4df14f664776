// Package layers builds the graph nodes of lipformer's layers — Linear, Embedding,
// LayerNorm, MLP, dot-product and L2 multihead self-attention, and the transformer block;
// spectral normalisation, the spectrally normalised MLP and the invertible block (SPEC
// section 3) — over parameters that are shared by every graph built from them, and reports
// their Lipschitz constants or bounds (SPEC sections 1-3).
//
// Activations are 2-D: a batch of B sequences of T tokens of width D is a (B*T, D) matrix.
// A layer is a plain struct of *Param; its Forward method adds nodes to a *Graph.
package layers
