//go:build amd64

package cpu

// dotZ returns Σ x_i·y_i over n ≥ 0 values (AVX-512).
//
//go:noescape
func dotZ(x, y *float32, n int) float32

// axpyZ sets dst_i += a·x_i over n ≥ 0 values (AVX-512; in vec_amd64.s,
// from the template of the vector loops).
//
//go:noescape
func axpyZ(dst, x *float32, n int, a float32)

// axpy4Z sets dst_i += a0·x_i + a1·x_{ld+i} + a2·x_{2ld+i} + a3·x_{3ld+i}
// over n ≥ 0 values, with the roundings of four axpyZ calls in that
// order (AVX-512).
//
//go:noescape
func axpy4Z(dst, x *float32, ld, n int, a0, a1, a2, a3 float32)

// sgemv computes c = a·b for a product with one column (n = 1), the
// AVX-512 kit's gemv, reporting whether it did: a packed B panel
// would hold one useful column in sixteen. With a row-major each c_i is
// the dot product of row i with b; with a column-major, c is the sum of
// a's columns scaled by b's values (axpy). b is copied first when its
// values are not contiguous. The sums run in a different order than the
// block kernels', so results may differ from theirs in the last bits.
func sgemv(m, k int, a, b, c f32Mat) bool {
	if a.cs != 1 && a.rs != 1 {
		return false
	}
	a.check(m, k)
	b.check(k, 1)
	c.check(m, 1)
	x := b.data[b.off:]
	if b.rs != 1 {
		tmp := make([]float32, k)
		for l := range tmp {
			tmp[l] = b.data[b.off+l*b.rs]
		}
		x = tmp
	}
	x = x[:k]
	if a.cs == 1 {
		for i := range m {
			c.data[c.off+i*c.rs] = dotZ(&a.data[a.off+i*a.rs], &x[0], k)
		}
		return true
	}
	out := c.data[c.off:]
	if c.rs != 1 {
		out = make([]float32, m)
	} else {
		out = out[:m]
		clear(out)
	}
	l := 0
	for ; l+4 <= k; l += 4 { // four columns a pass: out is loaded and stored once for them
		axpy4Z(&out[0], &a.data[a.off+l*a.cs], a.cs, m, x[l], x[l+1], x[l+2], x[l+3])
	}
	for ; l < k; l++ {
		axpyZ(&out[0], &a.data[a.off+l*a.cs], m, x[l])
	}
	if c.rs != 1 {
		for i, v := range out {
			c.data[c.off+i*c.rs] = v
		}
	}
	return true
}

// souter computes c = a·b for a product with K = 1, an outer product,
// the AVX-512 kit's outer, when c and b are row-major,
// reporting whether it did: row i of c is b's row scaled by a_i, where
// the packed kernels would pack both operands for one step of K. Each
// value is the product a_i·b_j rounded once, as theirs (a zero product
// may differ from theirs in its sign).
func souter(m, n int, a, b, c f32Mat) bool {
	if c.cs != 1 || b.cs != 1 {
		return false
	}
	a.check(m, 1)
	b.check(1, n)
	c.check(m, n)
	x := b.data[b.off : b.off+n]
	for i := range m {
		row := c.data[c.off+i*c.rs:][:n]
		mulScalarZ(&row[0], &x[0], n, a.data[a.off+i*a.rs])
	}
	return true
}
