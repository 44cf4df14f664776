package kernel

// The AVX2/FMA kernels of rowdots_amd64.s, on raw pointers; d is a multiple of 8.

// dotRowsAVX2 writes s[j] = alpha (k_j . q) for rows j < m (m >= 1), four rows at a
// time.
//
//go:noescape
func dotRowsAVX2(s, k, q *float32, m, d int, alpha float32)

// weightedSumAVX2 writes out = sum_{j < m} p[j] v_j (m >= 1), holding up to 64 columns
// of out in registers while it streams the rows.
//
//go:noescape
func weightedSumAVX2(out, p, v *float32, m, d int)

// dotRowsVec computes DotRows (d a multiple of 8, s not empty) when the processor has
// the kernels and returns the number of rows done: all, or 0 without them.
func dotRowsVec(s, k, q []float32, alpha float32) int {
	m := len(s)
	if !vecKernels() {
		return 0
	}
	dotRowsAVX2(&s[0], &k[0], &q[0], m, len(q), alpha)
	return m
}

// weightedSumVec computes WeightedRowSum (d a multiple of 8, p not empty) and reports
// true when the processor has the kernel, else does nothing and reports false.
func weightedSumVec(out, p, v []float32) bool {
	if len(p) == 0 || !vecKernels() {
		return false
	}
	weightedSumAVX2(&out[0], &p[0], &v[0], len(p), len(out))
	return true
}
