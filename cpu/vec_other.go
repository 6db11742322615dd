//go:build !amd64

package cpu

// vecZ is false: there are no vector loops on this architecture, and the
// stubs below are never called.
var vecZ = false

func addZ(dst, x, y *float32, n int)                          { panic("cpu: no vector loops") }
func subZ(dst, x, y *float32, n int)                          { panic("cpu: no vector loops") }
func mulZ(dst, x, y *float32, n int)                          { panic("cpu: no vector loops") }
func divZ(dst, x, y *float32, n int)                          { panic("cpu: no vector loops") }
func addScalarZ(dst, x *float32, n int, y float32)            { panic("cpu: no vector loops") }
func mulScalarZ(dst, x *float32, n int, y float32)            { panic("cpu: no vector loops") }
func sqrtZ(dst, x *float32, n int)                            { panic("cpu: no vector loops") }
func addcmulZ(dst, a, b, c *float32, n int, v float32)        { panic("cpu: no vector loops") }
func addcdivZ(dst, a, b, c *float32, n int, v float32)        { panic("cpu: no vector loops") }
func clampZ(dst, x *float32, n int, lo, hi float32)           { panic("cpu: no vector loops") }
func addcmulScalarZ(dst, a, b *float32, n int, v, c float32)  { panic("cpu: no vector loops") }
func reluZ(dst, x *float32, n int, zero float32)              { panic("cpu: no vector loops") }
func reluBackwardZ(dst, x, y *float32, n int, zero float32)   { panic("cpu: no vector loops") }
func selectZ(dst *float32, cond *uint8, x, y *float32, n int) { panic("cpu: no vector loops") }
func selectScalarZ(dst *float32, cond *uint8, x *float32, n int, y float32) {
	panic("cpu: no vector loops")
}
func eqScalarZ(dst *uint8, x *float32, n int, y float32) { panic("cpu: no vector loops") }
func neScalarZ(dst *uint8, x *float32, n int, y float32) { panic("cpu: no vector loops") }
func ltScalarZ(dst *uint8, x *float32, n int, y float32) { panic("cpu: no vector loops") }
func leScalarZ(dst *uint8, x *float32, n int, y float32) { panic("cpu: no vector loops") }
func gtScalarZ(dst *uint8, x *float32, n int, y float32) { panic("cpu: no vector loops") }
func geScalarZ(dst *uint8, x *float32, n int, y float32) { panic("cpu: no vector loops") }
func eqZ(dst *uint8, x, y *float32, n int)               { panic("cpu: no vector loops") }
func neZ(dst *uint8, x, y *float32, n int)               { panic("cpu: no vector loops") }
func ltZ(dst *uint8, x, y *float32, n int)               { panic("cpu: no vector loops") }
func leZ(dst *uint8, x, y *float32, n int)               { panic("cpu: no vector loops") }
func gtZ(dst *uint8, x, y *float32, n int)               { panic("cpu: no vector loops") }
func geZ(dst *uint8, x, y *float32, n int)               { panic("cpu: no vector loops") }
func argMaxRunsZ(best *float32, at *int32, row *float32, n int, k int32) {
	panic("cpu: no vector loops")
}
func argMinRunsZ(best *float32, at *int32, row *float32, n int, k int32) {
	panic("cpu: no vector loops")
}
