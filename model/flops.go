package model

import (
	"fmt"

	"lipformer/ops"
)

// FLOPs is the count of matrix-product FLOPs (2 per multiply-add) of one run of a program.
type FLOPs struct {
	Forward float64 // one forward pass
	Train   float64 // forward and backward pass of a training step
}

// CountFLOPs counts the matrix-product FLOPs that a batch of `batch` sequences of
// cfg.Context tokens computes. With N = B*T rows, D the width, H heads of width d = D/H,
// F the MLP width, V the vocabulary, L layers and A the entries of a T x T attention map
// that the attention op computes (causalArea: T^2 up to T = 64, about T(T+64)/2 beyond),
// the forward pass is
//
//	L * ( 2*N*D*(k*D)        packed input projection [q|k|v] (k = 3) or, tied L2, [q|v] (k = 2)
//	    + 4*D*D*d            tied L2 only: the value weights W^{Q,h} (W^{Q,h}^T W^{V,h}) / sqrt(d),
//	                         two (D,d)x(d,d)-sized products per head
//	    + 4*B*A*D            per sequence and head Q K^T and P V, 2*A*d each, over the blocks of
//	                         P the op computes
//	    + 2*N*D*D            output projection W^O
//	    + 4*N*D*F*m )        m MLP sub-blocks (spec.Model.MLPSubBlocks), D -> F -> D
//	+ 2*N*D*V                head (tied or not)
//
// and a training step is 3 times that: the backward of a product A B is the two products
// dA = dY B^T and dB = A^T dY of the same size (every product's inputs need gradients,
// since the embeddings are learned); the attention backward's four products (dP = dO V^T,
// dV = P^T dO, and dS by K and by Q, or tied L2 dS and dS^T by Q) run over the same blocks,
// by rows or by columns, and reuse the P its forward kept. Elementwise work, softmax,
// LayerNorm, the power iteration and the Lipschitz bound are not counted. Spectral
// normalisation divides weights and adds no product.
func CountFLOPs(cfg Config, batch int) (FLOPs, error) {
	if batch < 1 {
		return FLOPs{}, fmt.Errorf("flops: batch %d, want >= 1", batch)
	}
	s, err := shapeOf(cfg)
	if err != nil {
		return FLOPs{}, err
	}
	b := float64(batch)
	n := b * float64(cfg.Context)
	layer := n*s.row + 4*b*causalArea(cfg.Context, ops.AttentionBlock)*s.d
	if s.tiedL2 {
		layer += 4 * s.d * s.d * s.hd
	}
	fwd := float64(cfg.Layers)*layer + n*s.head
	return FLOPs{Forward: fwd, Train: 3 * fwd}, nil
}

// causalArea is the number of entries of a causal T x T attention map in its blocks of
// `block` rows and columns on and below the block diagonal: the sum over the row blocks of
// their rows times the end of the block, the columns they see.
func causalArea(t, block int) float64 {
	var a int
	for lo := 0; lo < t; lo += block {
		hi := min(t, lo+block)
		a += (hi - lo) * hi
	}
	return float64(a)
}

// flopShape holds the sizes of a model that its FLOP counts use.
type flopShape struct {
	d, hd  float64 // width D and head width d
	row    float64 // a layer's products per row, outside attention: 2*D*(k*D) + 2*D*D + 4*D*F*m, + 2*D*D with a mixing sub-block
	fill   float64 // the decoder's row: as row, but tied L2 projects by W^Q alone (k = 1)
	head   float64 // the head's per row: 2*D*V
	tiedL2 bool
}

// shapeOf validates cfg's sizes and architecture for the FLOP counts.
func shapeOf(cfg Config) (flopShape, error) {
	if cfg.Heads < 1 || cfg.Width%cfg.Heads != 0 || cfg.Context < 1 || cfg.Layers < 1 {
		return flopShape{}, fmt.Errorf("flops: width %d, heads %d, context %d, layers %d: want positive sizes, width a multiple of the heads",
			cfg.Width, cfg.Heads, cfg.Context, cfg.Layers)
	}
	d, v := float64(cfg.Width), float64(cfg.Vocab)
	f := float64(cfg.HiddenWidth())
	k, tiedL2 := 3.0, false
	if cfg.Arch.String() == "" {
		return flopShape{}, fmt.Errorf("flops: architecture unset")
	}
	if cfg.Arch.TiedL2() {
		k, tiedL2 = 2, true
	}
	mlp := 4*d*f*float64(cfg.MLPSubBlocks()) + 2*d*d*float64(cfg.MixSubBlocks()) // and the mixing sub-block's W'
	row := 2*d*k*d + 2*d*d + mlp
	fill := row
	if tiedL2 {
		fill = 2*d*d + 2*d*d + mlp
	}
	return flopShape{d: d, hd: d / float64(cfg.Heads), row: row, fill: fill, head: 2 * d * v, tiedL2: tiedL2}, nil
}

// CountFillFLOPs counts the matrix-product FLOPs of generating with the Decoder until the
// context T is full: a prefill of p positions, then single steps at cache lengths m =
// p+1..T, which yield T - p + 1 tokens. With p = T/2+1 that is one cycle of the shift
// window (T - T/2 tokens). Per layer a prefill of n rows costs n rows of the decoder's
// products and 4*n*n*D of attention (Q K^T and P V over the n cached keys, all n x n of
// them: the decoder masks after the products), a step one row and 4*m*D; each yields one
// row of the head. Tied L2's decoder projects by W^Q alone, its value maps folded into W^O
// once per decoder, not per fill.
func CountFillFLOPs(cfg Config, p int) (float64, error) {
	s, err := shapeOf(cfg)
	if err != nil {
		return 0, err
	}
	l, t := float64(cfg.Layers), cfg.Context
	fl := l*(float64(p)*s.fill+4*float64(p*p)*s.d) + s.head
	for m := p + 1; m <= t; m++ {
		fl += l*(s.fill+4*float64(m)*s.d) + s.head
	}
	return fl, nil
}
