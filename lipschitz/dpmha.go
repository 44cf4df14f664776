package lipschitz

import "errors"

// ErrNotLipschitz says that a map has no finite Lipschitz constant, so no
// upper bound exists to return. Dot-product multihead attention is such a map
// on an unbounded domain (SPEC section 1, Kim et al. 2021, Thm 3.1): its
// Jacobian grows without bound as the inputs spread. Untied L2 attention is
// not Lipschitz either (SPEC section 2).
var ErrNotLipschitz = errors.New("lipschitz: the map is not Lipschitz (no finite bound; see SPEC section 1)")
