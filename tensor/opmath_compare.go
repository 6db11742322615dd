package tensor

import "github.com/tessera-ml/tessera/cpu"

// The comparison rows' CPU kernels (Eq, Ne, Lt, Le, Gt, Ge).

// A cmpOp names one of the six comparisons.
type cmpOp int

const (
	cmpEq cmpOp = iota
	cmpNe
	cmpLt
	cmpLe
	cmpGt
	cmpGe
)

// compare returns comparison c's kernels on every number type.
func compare(c cmpOp) cpuKernels {
	return numbers(k2(cmpOf[float32](c)), k2(cmpOf[float64](c)), k2(cmpOf[int32](c)))
}

// cmpOf returns comparison c on T: F per element and, for runs of two
// operands and runs against a scalar (a ReLU mask's x > 0), loops with
// the operator inline, which calling F per element costs several times
// over.
func cmpOf[T cpu.Number](c cmpOp) func([2]float64) cpu.Fn2[T, bool] {
	f := [...]func(x, y T) bool{cmpEq: eq[T], cmpNe: ne[T], cmpLt: lt[T], cmpLe: le[T], cmpGt: gt[T], cmpGe: ge[T]}[c]
	k := cpu.Fn2[T, bool]{F: f, Vec: cmpRun[T](c), VecScalar: cmpScalarRun[T](c)}
	return func([2]float64) cpu.Fn2[T, bool] { return k }
}

// cmpRun returns the loop d[i] = x[i] <c> y[i].
func cmpRun[T cpu.Number](c cmpOp) func(d []bool, x, y []T) {
	return [...]func(d []bool, x, y []T){cmpEq: cpu.EqVec[T], cmpNe: cpu.NeVec[T], cmpLt: cpu.LtVec[T],
		cmpLe: cpu.LeVec[T], cmpGt: cpu.GtVec[T], cmpGe: cpu.GeVec[T]}[c]
}

// cmpScalarRun returns the loop d[i] = x[i] <c> y.
func cmpScalarRun[T cpu.Number](c cmpOp) func(d []bool, x []T, y T) {
	return [...]func(d []bool, x []T, y T){cmpEq: cpu.EqScalarVec[T], cmpNe: cpu.NeScalarVec[T], cmpLt: cpu.LtScalarVec[T],
		cmpLe: cpu.LeScalarVec[T], cmpGt: cpu.GtScalarVec[T], cmpGe: cpu.GeScalarVec[T]}[c]
}

func eq[T cpu.Number](x, y T) bool { return x == y }
func ne[T cpu.Number](x, y T) bool { return x != y }
func lt[T cpu.Number](x, y T) bool { return x < y }
func le[T cpu.Number](x, y T) bool { return x <= y }
func gt[T cpu.Number](x, y T) bool { return x > y }
func ge[T cpu.Number](x, y T) bool { return x >= y }
