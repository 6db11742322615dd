//go:build !(386 || amd64 || arm || arm64 || loong64 || mips || mipsle || mips64 || mips64le || ppc64 || ppc64le || riscv64 || s390x)

package goid

// Current returns the calling goroutine's identity, never 0: its
// goroutine number, read from runtime.Stack (no assembly here reads the g on
// this architecture).
func Current() uintptr { return fromStack() }
