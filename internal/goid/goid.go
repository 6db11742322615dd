// Package goid tells goroutines apart: Current returns a number that
// stays the same for the life of the calling goroutine and differs from
// that of every other goroutine alive at the same time.
//
// Go has no public goroutine id, by design: state keyed by goroutine is
// rarely what a program needs. Package tensor needs it for one check
// only, that the default context is not used by two goroutines at once
// (tensor.Context), and that check runs on every tensor made while a
// Scope is open, so Current must cost a few nanoseconds. It is the
// address of the runtime's goroutine descriptor (the g), which assembly
// reads from the thread-local slot (386, amd64) or the register that
// holds it (every other architecture but wasm): 2 ns on amd64, checked
// under qemu-user on the others. On wasm it is the goroutine number that
// runtime.Stack prints, which costs about 4 µs.
package goid

import (
	"runtime"
	"strconv"
)

// fromStack returns the calling goroutine's number, parsed from the
// header runtime.Stack writes ("goroutine 18 [running]:"). It is Current
// where no assembly reads the g, and tested everywhere.
func fromStack() uintptr {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	const prefix = "goroutine "
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		panic("goid: runtime.Stack wrote " + strconv.Quote(string(b)) + ", not a goroutine header")
	}
	b = b[len(prefix):]
	var n uintptr
	i := 0
	for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		n = n*10 + uintptr(b[i]-'0')
	}
	if i == 0 || n == 0 {
		panic("goid: runtime.Stack wrote " + strconv.Quote(string(buf[:])) + ", with no goroutine number")
	}
	return n
}
