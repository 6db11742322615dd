//go:build !amd64

package cpu

// argZ is false: there are no vector loops on this architecture, and
// ArgMaxRuns and ArgMinRuns run argRunsF32.
var argZ = false

func argMaxRunsZ(best *float32, at *int32, row *float32, n int, k int32) {
	panic("cpu: no vector loops")
}

func argMinRunsZ(best *float32, at *int32, row *float32, n int, k int32) {
	panic("cpu: no vector loops")
}
