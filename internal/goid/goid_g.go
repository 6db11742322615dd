//go:build 386 || amd64 || arm || arm64 || loong64 || mips || mipsle || mips64 || mips64le || ppc64 || ppc64le || riscv64 || s390x

package goid

// Current returns the calling goroutine's identity, never 0: the address
// of its g, which the runtime keeps for the goroutine's life (stacks
// move as they grow; the g does not). A g is reused for a goroutine
// started after this one exits, so an identity is only meaningful while
// its goroutine runs.
func Current() uintptr { return getg() }

// getg returns the g of the calling goroutine (goid_$GOARCH.s).
func getg() uintptr
