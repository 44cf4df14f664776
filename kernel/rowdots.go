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
// x, as L2 attention's logits use them. Each row is summed in order, left to right; four
// rows run side by side so that their sums do not wait on each other.
func SquaredNorms[T Float](n, x []T, ld, d int) {
	i := 0
	for ; i+4 <= len(n); i += 4 {
		r0, r1, r2, r3 := x[i*ld:][:d], x[(i+1)*ld:][:d], x[(i+2)*ld:][:d], x[(i+3)*ld:][:d]
		var s0, s1, s2, s3 T
		for j, v := range r0 {
			s0 += v * v
			s1 += r1[j] * r1[j]
			s2 += r2[j] * r2[j]
			s3 += r3[j] * r3[j]
		}
		n[i], n[i+1], n[i+2], n[i+3] = s0, s1, s2, s3
	}
	for ; i < len(n); i++ {
		var s T
		for _, v := range x[i*ld : i*ld+d] {
			s += v * v
		}
		n[i] = s
	}
}
