package cpu

import (
	"fmt"
	"testing"
)

// TestShortInputsPanic checks that the vector entry points whose float32
// paths run assembly panic, before reading or writing anything, when an
// input is shorter than the output, on the vector loops and on Go's.
func TestShortInputsPanic(t *testing.T) {
	const n = 37
	d, s := make([]float32, n), make([]float32, n-1)
	m, i32 := make([]bool, n), make([]int32, n-1)
	calls := map[string]func(){
		"AddVec":            func() { AddVec(d, d, s) },
		"SubVec":            func() { SubVec(d, s, d) },
		"MulVec":            func() { MulVec(d, d, s) },
		"DivVec":            func() { DivVec(d, s, d) },
		"AddVecScalar":      func() { AddVecScalar(d, s, 1) },
		"MulVecScalar":      func() { MulVecScalar(d, s, 2) },
		"SqrtVec":           func() { SqrtVec(d, s) },
		"ExpVecF32":         func() { ExpVecF32(d, s) },
		"AddcmulVec":        func() { AddcmulVec(d, d, d, s, 1) },
		"AddcdivVec":        func() { AddcdivVec(d, d, s, d, 1) },
		"AddcmulScalarVec":  func() { AddcmulScalarVec(d, d, s, 1, 1) },
		"ReLUVec":           func() { ReLUVec(d, s) },
		"ReLUBackwardVec/x": func() { ReLUBackwardVec(d, s, d) },
		"ReLUBackwardVec/y": func() { ReLUBackwardVec(d, d, s) },
		"ClampVec":          func() { ClampVec(d, s, -1, 1) },
		"LtScalarVec":       func() { LtScalarVec(m, s, 0) },
		"GeVec":             func() { GeVec(m, d, s) },
		"SelectRun/cond":    func() { SelectRun(d, m[1:], d, d) },
		"SelectRun/y":       func() { SelectRun(d, m, d, s) },
		"ArgMaxRuns/row":    func() { ArgMaxRuns(d, make([]int32, n), s, 1) },
		"ArgMinRuns/at":     func() { ArgMinRuns(d, i32, d, 1) },
	}
	defer func(z bool) { vecZ = z }(vecZ)
	for _, z := range []bool{true, false} {
		vecZ = vecZ && z
		for name, call := range calls {
			t.Run(fmt.Sprintf("%s/vector_loops_%v", name, vecZ), func(t *testing.T) {
				defer func() {
					if recover() == nil {
						t.Fatalf("no panic for an input of %d values and an output of %d", n-1, n)
					}
				}()
				call()
			})
		}
	}
}
