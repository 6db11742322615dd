package tensor

import (
	"fmt"
	"strings"
	"testing"
)

// TestCPUDispatchRejectsDTypes: a CPU backend method reached with a
// dtype it has no kernel for panics with a message naming the kernel
// and the dtype, instead of leaving the output uninitialised (as the
// type switches without a default case did).
func TestCPUDispatchRejectsDTypes(t *testing.T) {
	b := cpuBackend{}
	bools := func() *Tensor { return New([]bool{true, false, true}) }
	for name, f := range map[string]func(){
		"CumSum on bool":   func() { b.cumsum(bools(), bools(), 0) },
		"Softmax on int32": func() { x := New([]int32{1, 2}); b.softmax(false, x, x, 0) },
		"MatMul on bool":   func() { x := bools().Reshape(1, 1, 3); b.matmul(x, x, x) },
		"Exp on int32":     func() { x := New([]int32{1, 2}); b.unary(OpExp, [2]float64{}, x, x) },
		"Sum on bool":      func() { x := bools(); b.reduce(OpSum, x, x) },
		"unknown dtype":    func() { cpuFor("fill", DType(9), &elemKernels) },
	} {
		msg := ""
		func() {
			defer func() { msg = fmt.Sprint(recover()) }()
			f()
		}()
		if !strings.Contains(msg, "has no CPU kernel for dtype") {
			t.Errorf("%s: panic %q, want one naming the kernel and the dtype", name, msg)
		}
	}
}
