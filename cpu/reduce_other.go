//go:build !amd64

package cpu

// reduceAsm reports whether float32 reductions over long contiguous rows
// use assembly kernels; there are none on this architecture. The helpers
// below are their plain-Go equivalents, so callers need no build tags of
// their own.
var reduceAsm = false

// sumF32 returns the sum of x in float64.
func sumF32(x []float32) float64 {
	var a0, a1, a2, a3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		a0 += float64(x[i])
		a1 += float64(x[i+1])
		a2 += float64(x[i+2])
		a3 += float64(x[i+3])
	}
	for ; i < len(x); i++ {
		a0 += float64(x[i])
	}
	return (a0 + a1) + (a2 + a3)
}

// maxAnyF32 returns the largest element of x (len(x) > 0), or NaN when
// one is NaN.
func maxAnyF32(x []float32) float32 { return maxF32(x) }

// minF32 returns the smallest element of x (len(x) > 0), or NaN when one
// is NaN.
func minF32(x []float32) float32 {
	m := x[0]
	for _, v := range x[1:] {
		if v < m || v != v {
			m = v
		}
	}
	return m
}

// foldCols4F32 adds to acc[j] the float64 sum (x0+x1)+(x2+x3) of column
// j of the rows of x at off, off+rs, off+2rs and off+3rs (rs ≥ 0).
func foldCols4F32(acc []float64, x []float32, off, rs int) {
	n := len(acc)
	v0, v1, v2, v3 := x[off:off+n], x[off+rs:off+rs+n], x[off+2*rs:off+2*rs+n], x[off+3*rs:off+3*rs+n]
	for j := range acc {
		acc[j] += (float64(v0[j]) + float64(v1[j])) + (float64(v2[j]) + float64(v3[j]))
	}
}

// foldColsF32 adds to acc, groups times, the column sums of the next
// four rows of x (at off, off+rs, ...; rs ≥ 0), as that many
// foldCols4F32 calls do.
func foldColsF32(acc []float64, x []float32, off, rs, groups int) {
	for range groups {
		foldCols4F32(acc, x, off, rs)
		off += 4 * rs
	}
}
