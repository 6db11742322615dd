//go:build amd64

package cpu

// foldZ reports whether Col2Im adds contiguous float32 rows with the
// AVX-512 loop of im2col_amd64.s; tests turn it off to compare it with
// the Go loop.
var foldZ = cpuAVX512

// addBlockZ is addBlock for float32 rows of n ≥ 0 contiguous values.
//
//go:noescape
func addBlockZ(dst *float32, drs int, src *float32, srs int, rows int, n int)
