package ops

import "errors"

// ErrNonFinite is wrapped by the error of an op that meets a value that is not finite where
// it needs one (a contractive layer's bound of weights that overflowed): the run cannot go
// on, and a trainer treats it as a divergence, not as a bug.
var ErrNonFinite = errors.New("a non-finite value inside the graph")
