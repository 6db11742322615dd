//go:build !amd64

package cpu

// FMABits is 0: this architecture has no assembly kernels, and FMAPeak
// runs plain Go.
func FMABits() int { return 0 }

// fmaLoop runs n iterations of twelve independent multiply-adds in plain
// Go and returns the float32 flops done.
func fmaLoop(n int) float64 { return goFMALoop(n) }
