package main

import (
	"fmt"

	"lipformer/model"
)

// flopCount is the analytic count of matrix-product FLOPs (2 per multiply-add) of one run
// of a program.
type flopCount struct {
	Forward float64 // one forward pass
	Train   float64 // forward and backward pass of a training step
}

// countFLOPs counts the matrix-product FLOPs of a batch of `batch` sequences of
// cfg.Context tokens. With N = B*T rows, D the width, H heads of width d = D/H, F the MLP
// width, V the vocabulary and L layers, the forward pass is
//
//	L * ( 2*N*D*(k*D)        packed input projection [q|k|v] (k = 3) or, tied L2, [q|v] (k = 2)
//	    + 4*D*D*d            tied L2 only: the value weights W^{Q,h} (W^{Q,h}^T W^{V,h}) / sqrt(d),
//	                         two (D,d)x(d,d)-sized products per head
//	    + 4*B*T*T*D          per sequence and head Q K^T and P V, 2*T*T*d each; the full T x T,
//	                         as the kernel computes it (the causal mask saves no FLOPs)
//	    + 2*N*D*D            output projection W^O
//	    + 4*N*D*F )          MLP, D -> F -> D
//	+ 2*N*D*V                head (tied or not)
//
// and a training step is 3 times that: the backward of a product A B is the two products
// dA = dY B^T and dB = A^T dY of the same size (every product's inputs need gradients,
// since the embeddings are learned). These are model FLOPs: the attention backward's
// recomputation of P (2*B*T*T*D per layer), elementwise work, softmax, LayerNorm, the
// power iteration and the Lipschitz bound are not counted. Spectral normalisation divides
// weights and adds no product. For P1 this gives 11.27 GFLOP per training step, GORGONIA.md's
// 11.3.
func countFLOPs(cfg model.Config, batch int) (flopCount, error) {
	if cfg.Heads < 1 || cfg.Width%cfg.Heads != 0 || batch < 1 || cfg.Context < 1 || cfg.Layers < 1 {
		return flopCount{}, fmt.Errorf("flops: width %d, heads %d, context %d, layers %d, batch %d: want positive sizes, width a multiple of the heads",
			cfg.Width, cfg.Heads, cfg.Context, cfg.Layers, batch)
	}
	b, t, d, v := float64(batch), float64(cfg.Context), float64(cfg.Width), float64(cfg.Vocab)
	n := b * t
	f := float64(cfg.Hidden)
	if cfg.Hidden == 0 {
		f = 4 * d
	}
	hd := d / float64(cfg.Heads)
	k, tiedL2 := 3.0, false
	switch cfg.Arch {
	case "l2", "contractive-l2", "invertible-l2":
		k, tiedL2 = 2, true
	case "dp", "l2-untied", "invertible-dp":
	default:
		return flopCount{}, fmt.Errorf("flops: unknown architecture %q", cfg.Arch)
	}
	layer := 2*n*d*k*d + 4*b*t*t*d + 2*n*d*d + 4*n*d*f
	if tiedL2 {
		layer += 4 * d * d * hd
	}
	fwd := float64(cfg.Layers)*layer + 2*n*d*v
	return flopCount{Forward: fwd, Train: 3 * fwd}, nil
}
