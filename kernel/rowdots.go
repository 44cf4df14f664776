package kernel

// The two products of one query row with a cache of rows, for a decoder's attention
// step: m keys or values stored contiguously, each of width d, streamed at the memory's
// speed (docs/performance.md, "Decoder").

// DotRows writes s[j] = alpha (k_j . q) for the len(s) rows k_j of k, each of width
// len(q), stored contiguously; s must not overlap k or q. With an empty q every s[j] is 0.
func DotRows[T Float](s, k, q []T, alpha T) {
	d := len(q)
	if len(s) == 0 || d == 0 {
		clear(s)
		return
	}
	_ = k[len(s)*d-1]
	if s32, ok := any(s).([]float32); ok && d%8 == 0 {
		n := dotRowsVec(s32, any(k).([]float32), any(q).([]float32), float32(alpha))
		s, k = s[n:], k[n*d:]
	}
	for j := range s {
		row := k[j*d : (j+1)*d]
		var acc T
		for i, x := range q {
			acc += row[i] * x
		}
		s[j] = alpha * acc
	}
}

// WeightedRowSum writes out = sum_j p[j] v_j over the len(p) rows v_j of v, each of
// width len(out), stored contiguously; out must not overlap p or v.
func WeightedRowSum[T Float](out, p, v []T) {
	d := len(out)
	if d == 0 {
		return
	}
	if len(p) > 0 {
		_ = v[len(p)*d-1]
	}
	if o32, ok := any(out).([]float32); ok && d%8 == 0 && weightedSumVec(o32, any(p).([]float32), any(v).([]float32)) {
		return
	}
	clear(out)
	for j, w := range p {
		row := v[j*d : (j+1)*d]
		for i, x := range row {
			out[i] += w * x
		}
	}
}

// SquaredNorms writes into n the squared norms of the len(n) rows (stride ld, width d) of
// x, as L2 attention's logits use them: PairDots of x with itself.
func SquaredNorms[T Float](n, x []T, ld, d int) { PairDots(n, x, x, ld, d) }
