//go:build amd64

package cpu

// argZ reports whether the float32 arg-reduction runs use the AVX-512
// loops of argreduce_amd64.s; tests turn it off to compare them with the
// Go loops.
var argZ = cpuAVX512

// argMaxRunsZ and argMinRunsZ are ArgMaxRuns and ArgMinRuns for n ≥ 0
// float32 lanes.
//
//go:noescape
func argMaxRunsZ(best *float32, at *int32, row *float32, n int, k int32)

//go:noescape
func argMinRunsZ(best *float32, at *int32, row *float32, n int, k int32)
