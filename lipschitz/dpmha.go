package lipschitz

import "errors"

// ErrNotLipschitz says that a map has no finite Lipschitz constant, so no
// upper bound exists to return. Dot-product multihead attention is such a map
// on an unbounded domain (docs/math.md, "Attention", Kim et al. 2021, Thm 3.1): its
// Jacobian grows without bound as the inputs spread. Untied L2 attention is
// not Lipschitz either (docs/math.md, "Bounds of tied L2 attention").
var ErrNotLipschitz = errors.New("lipschitz: the map is not Lipschitz (no finite bound; see docs/math.md, Attention)")
