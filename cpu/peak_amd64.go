//go:build amd64

package cpu

//go:noescape
func fmaLoopY(n int)

//go:noescape
func fmaLoopZ(n int)
