package wgsl

import "testing"

// BenchmarkElementwise measures what every elementwise op pays to get its
// kernel once the source is cached: planning, the template data, the
// render-cache lookup and the params.
func BenchmarkElementwise(b *testing.B) {
	c := Contiguous(4, 65)
	tr := Layout{Shape: []int{4, 65}, Strides: []int{1, 4}}
	bc := Layout{Shape: []int{7, 33, 65}, Strides: []int{0, 65, 1}}
	for _, k := range []struct {
		name, expr string
		in         []string
		a          ElementwiseArgs
	}{
		{"vec4", "x + y", []string{F32, F32}, ElementwiseArgs{Out: Contiguous(64, 64), In: []Layout{Contiguous(64, 64), Contiguous(64, 64)}}},
		{"contig", "exp(x)", []string{F32}, ElementwiseArgs{Out: Contiguous(3, 5), In: []Layout{Contiguous(3, 5)}}},
		{"strided", "x * y", []string{F32, F32}, ElementwiseArgs{Out: c, In: []Layout{tr, c}}},
		{"broadcast3", "select(z, y, x)", []string{Bool, F32, F32}, ElementwiseArgs{Out: Contiguous(7, 33, 65), In: []Layout{bc, Contiguous(7, 33, 65), bc}}},
		{"prelude", "pow_(x, p0)", []string{F32}, ElementwiseArgs{Out: tr, In: []Layout{tr}, P0: 2.5}},
	} {
		b.Run(k.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Elementwise(k.expr, k.in, F32, k.a); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
