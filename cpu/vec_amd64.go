//go:build amd64

package cpu

//go:generate python3 ../tools/asmgen/vec_avx512.py vec_amd64.s

// vecZ reports whether the float32 vector functions of vec.go run the
// AVX-512 loops of vec_amd64.s; tests turn it off to compare them with
// the Go loops.
var vecZ = cpuAVX512

// The loops of vec_amd64.s over n ≥ 0 float32 values; dst may be an
// input.

//go:noescape
func addZ(dst, x, y *float32, n int)

//go:noescape
func subZ(dst, x, y *float32, n int)

//go:noescape
func mulZ(dst, x, y *float32, n int)

//go:noescape
func divZ(dst, x, y *float32, n int)

//go:noescape
func addScalarZ(dst, x *float32, n int, y float32)

//go:noescape
func mulScalarZ(dst, x *float32, n int, y float32)

//go:noescape
func sqrtZ(dst, x *float32, n int)

//go:noescape
func addcmulZ(dst, a, b, c *float32, n int, v float32)

//go:noescape
func addcdivZ(dst, a, b, c *float32, n int, v float32)

//go:noescape
func addcmulScalarZ(dst, a, b *float32, n int, v, c float32)

//go:noescape
func clampZ(dst, x *float32, n int, lo, hi float32)

//go:noescape
func reluZ(dst, x *float32, n int, zero float32)

//go:noescape
func reluBackwardZ(dst, x, y *float32, n int, zero float32)

//go:noescape
func selectZ(dst *float32, cond *uint8, x, y *float32, n int)

//go:noescape
func selectScalarZ(dst *float32, cond *uint8, x *float32, n int, y float32)

// The comparison loops of compare.go: dst_i = x_i <op> y (or y_i) as 1
// or 0.

//go:noescape
func eqScalarZ(dst *uint8, x *float32, n int, y float32)

//go:noescape
func neScalarZ(dst *uint8, x *float32, n int, y float32)

//go:noescape
func ltScalarZ(dst *uint8, x *float32, n int, y float32)

//go:noescape
func leScalarZ(dst *uint8, x *float32, n int, y float32)

//go:noescape
func gtScalarZ(dst *uint8, x *float32, n int, y float32)

//go:noescape
func geScalarZ(dst *uint8, x *float32, n int, y float32)

//go:noescape
func eqZ(dst *uint8, x, y *float32, n int)

//go:noescape
func neZ(dst *uint8, x, y *float32, n int)

//go:noescape
func ltZ(dst *uint8, x, y *float32, n int)

//go:noescape
func leZ(dst *uint8, x, y *float32, n int)

//go:noescape
func gtZ(dst *uint8, x, y *float32, n int)

//go:noescape
func geZ(dst *uint8, x, y *float32, n int)

// argMaxRunsZ and argMinRunsZ are ArgMaxRuns and ArgMinRuns (argreduce.go)
// for n ≥ 0 float32 lanes.
//
//go:noescape
func argMaxRunsZ(best *float32, at *int32, row *float32, n int, k int32)

//go:noescape
func argMinRunsZ(best *float32, at *int32, row *float32, n int, k int32)
