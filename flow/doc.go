// Package flow inverts the residual sub-blocks of lipformer's invertible transformers
// (docs/math.md, "Contraction and inversion"; after i-ResNet and Residual Flows): a sub-block y = x + g(x) whose branch
// g is c-Lipschitz with c < 1 is a bijection, and x is the fixed point of x = y - g(x),
// reached geometrically from x_0 = y by x_{k+1} = y - g(x_k) (Banach).
//
// Each sub-block contracts in its own norm, and is inverted and measured in it:
//   - the attention sub-block (contractive L2 attention) in the inf-norm of each sequence,
//     max_ij |X_ij| (Norm SeqInf), under the kim and product bounds; under the token2 bound
//     in the max over tokens of the token 2-norms (Norm Token2), like the MLP;
//   - the MLP sub-block (spectrally normalised, acting on each token alone) in the 2-norm
//     of each token, hence in the max over tokens of the token 2-norms (Norm Token2).
//
// Over a batch, a norm is the maximum over its sequences, in which each sub-block still
// contracts. Under the inf-norm bounds the two norms are not the same, and converting
// between them costs a factor up to sqrt(D) (||x||_inf <= ||x||_2 <= sqrt(D) ||x||_inf on a
// token): a whole block is certified to be invertible (each factor is), but no single
// constant below 1 is certified for it. Under the token2 bound both sub-blocks contract in
// the token norm (docs/math.md). The stack is inverted one sub-block at a time, from the
// last to the first, never as one fixed point.
//
// The invertible-dp architecture is the negative control: its attention branch is
// normalised naively by ||W^V||_2 ||W^O||_2 and has no bound, since dot-product attention
// is not Lipschitz (docs/math.md, "Attention"). Its inversion may fail, and ErrNotConverged says so.
//
// Branches are evaluated by forward-only compiled programs over batches of B sequences of
// T = context tokens, in float64 (convert float32 models with model.Model.WithDtype).
package flow
