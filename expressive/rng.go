package expressive

import "math/rand/v2"

// Stream tags keep the random streams of different quantities apart.
const (
	tagTarget uint64 = iota + 1
	tagG
	tagWeights
	tagInit
)

// mix is the SplitMix64 finaliser: a bijective scrambling of 64 bits.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// streamRNG returns a PCG generator determined by seed and the labels parts, so that each
// quantity (a target, a column of G, a weight matrix) has its own reproducible stream,
// independent of the order in which the others are drawn.
func streamRNG(seed uint64, parts ...uint64) *rand.Rand {
	h := mix(seed)
	for _, p := range parts {
		h = mix(h ^ mix(p))
	}
	return rand.New(rand.NewPCG(seed, h))
}
