package kernel

import "math"

// AdamStep holds the scalars of one AdamW update of a parameter, in its precision.
type AdamStep[T Float] struct {
	Keep              T // 1 - lr * weight decay for a decayed parameter, else 1
	Beta1, OneMinusB1 T
	Beta2, OneMinusB2 T
	StepSize          T // lr / (1 - beta1^t), with the parameter's learning-rate scale
	InvRootBc2        T // 1 / sqrt(1 - beta2^t)
	Eps               T
}

// AdamUpdate applies one AdamW update to the parameter p with gradient g and moments m and
// v (all of p's length), in place:
//
//	m = beta1 m + (1 - beta1) g,  v = beta2 v + (1 - beta2) g g,
//	p = keep p - stepSize m / (sqrt(v) invRootBc2 + eps),
//
// each operation rounded to T in that order: float32 in AVX2 where the processor has it,
// bit for bit the portable loop's (a float32 square root taken in float64 and rounded
// once is the correctly rounded float32 one, which the vector instruction gives).
func AdamUpdate[T Float](p, g, m, v []T, s AdamStep[T]) {
	g, m, v = g[:len(p)], m[:len(p)], v[:len(p)]
	n := 0
	if p32, ok := any(p).([]float32); ok {
		s32 := any(s).(AdamStep[float32])
		n = adamVec(p32, any(g).([]float32), any(m).([]float32), any(v).([]float32), &s32)
	}
	for i := n; i < len(p); i++ {
		gi := g[i]
		mi := s.Beta1*m[i] + s.OneMinusB1*gi
		vi := s.Beta2*v[i] + s.OneMinusB2*gi*gi
		m[i], v[i] = mi, vi
		denom := T(math.Sqrt(float64(vi)))*s.InvRootBc2 + s.Eps
		p[i] = s.Keep*p[i] - s.StepSize*mi/denom
	}
}
