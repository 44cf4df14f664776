package kernel

// Float is the element type of every kernel.
type Float interface{ float32 | float64 }
