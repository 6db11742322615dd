//go:build !amd64

package cpu

// foldZ is false: there is no vector loop on this architecture, and the
// stub below is never called.
var foldZ = false

func addBlockZ(dst *float32, drs int, src *float32, srs int, rows int, n int) {
	panic("cpu: no vector loops")
}
