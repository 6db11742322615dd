package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// The float64 references of the rows' CPU math (opmath.go), checked
// through each row's kernel for every dtype it computes in, on
// contiguous and transposed operands. The kernels' iteration and fast
// paths are tested in package cpu.

// opParams are the scalar parameters the checks pass: floats get
// fractions, int32 (which takes only int32 scalars) whole numbers.
var opParams = map[bool][2]float64{true: {0.75, 1.5}, false: {-2, 3}}

// unaryRefs is the reference of every unary op given its parameters p,
// and the domain its float inputs are drawn from.
var unaryRefs = map[Op]struct {
	f      func(x float64, p [2]float64) float64
	lo, hi float64
}{
	OpNeg:       {func(x float64, _ [2]float64) float64 { return -x }, -5, 5},
	OpAbs:       {func(x float64, _ [2]float64) float64 { return math.Abs(x) }, -5, 5},
	OpSign:      {func(x float64, _ [2]float64) float64 { return b2f(x > 0) - b2f(x < 0) }, -5, 5}, // sign(NaN) = 0
	OpExp:       {func(x float64, _ [2]float64) float64 { return math.Exp(x) }, -5, 5},
	OpLog:       {func(x float64, _ [2]float64) float64 { return math.Log(x) }, 0.01, 10},
	OpLog1p:     {func(x float64, _ [2]float64) float64 { return math.Log1p(x) }, -0.99, 10},
	OpSqrt:      {func(x float64, _ [2]float64) float64 { return math.Sqrt(x) }, 0, 10},
	OpRsqrt:     {func(x float64, _ [2]float64) float64 { return 1 / math.Sqrt(x) }, 0.01, 10},
	OpSquare:    {func(x float64, _ [2]float64) float64 { return x * x }, -5, 5},
	OpSin:       {func(x float64, _ [2]float64) float64 { return math.Sin(x) }, -5, 5},
	OpCos:       {func(x float64, _ [2]float64) float64 { return math.Cos(x) }, -5, 5},
	OpTanh:      {func(x float64, _ [2]float64) float64 { return math.Tanh(x) }, -5, 5},
	OpSigmoid:   {func(x float64, _ [2]float64) float64 { return 1 / (1 + math.Exp(-x)) }, -10, 10},
	OpReLU:      {func(x float64, _ [2]float64) float64 { return math.Max(x, 0) }, -5, 5},
	OpGELU:      {func(x float64, _ [2]float64) float64 { return x * 0.5 * math.Erfc(-x/math.Sqrt2) }, -5, 5},
	OpSiLU:      {func(x float64, _ [2]float64) float64 { return x / (1 + math.Exp(-x)) }, -10, 10},
	OpSoftplus:  {refSoftplus, -5, 5},
	OpErf:       {func(x float64, _ [2]float64) float64 { return math.Erf(x) }, -3, 3},
	OpPowScalar: {func(x float64, p [2]float64) float64 { return math.Pow(x, p[0]) }, 0, 5},
	OpClamp:     {func(x float64, p [2]float64) float64 { return math.Min(math.Max(x, p[0]), p[1]) }, -3, 3},
	OpAddScalar: {func(x float64, p [2]float64) float64 { return x + p[0] }, -5, 5},
	OpMulScalar: {func(x float64, p [2]float64) float64 { return x * p[0] }, -5, 5},
}

func refSoftplus(x float64, p [2]float64) float64 {
	if p[0]*x > p[1] {
		return x
	}
	return math.Log(1+math.Exp(p[0]*x)) / p[0]
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// binaryRefs is the reference of every binary op (comparisons and
// logical ops give 0 or 1; integer inputs are whole numbers).
var binaryRefs = map[Op]func(x, y float64) float64{
	OpAdd:        func(x, y float64) float64 { return x + y },
	OpSub:        func(x, y float64) float64 { return x - y },
	OpMul:        func(x, y float64) float64 { return x * y },
	OpDiv:        func(x, y float64) float64 { return x / y },
	OpPow:        math.Pow,
	OpMaximum:    nanOr(math.Max),
	OpMinimum:    nanOr(math.Min),
	OpEq:         func(x, y float64) float64 { return b2f(x == y) },
	OpNe:         func(x, y float64) float64 { return b2f(x != y) },
	OpLt:         func(x, y float64) float64 { return b2f(x < y) },
	OpLe:         func(x, y float64) float64 { return b2f(x <= y) },
	OpGt:         func(x, y float64) float64 { return b2f(x > y) },
	OpGe:         func(x, y float64) float64 { return b2f(x >= y) },
	OpLogicalAnd: func(x, y float64) float64 { return b2f(x != 0 && y != 0) },
	OpLogicalOr:  func(x, y float64) float64 { return b2f(x != 0 || y != 0) },
}

// ternaryRefs is the reference of every ternary op with value s.
var ternaryRefs = map[Op]func(a, b, c, s float64) float64{
	OpAddcmul: func(a, b, c, s float64) float64 { return a + s*b*c },
	OpAddcdiv: func(a, b, c, s float64) float64 { return a + s*b/c },
}

// nanOr returns f, except NaN when either operand is NaN.
func nanOr(f func(x, y float64) float64) func(x, y float64) float64 {
	return func(x, y float64) float64 {
		if math.IsNaN(x) || math.IsNaN(y) {
			return math.NaN()
		}
		return f(x, y)
	}
}

// opInput returns a (7, 33) operand of dt, transposed from a (33, 7)
// tensor when transpose is set: values in [lo, hi) (whole numbers for
// Int32, coin flips for Bool), with a NaN among floats when nan is set.
func opInput(r *rand.Rand, dt DType, lo, hi float64, transpose, nan bool) *Tensor {
	v := make([]float64, 7*33)
	for i := range v {
		v[i] = lo + (hi-lo)*r.Float64()
		if dt == Int32 || dt == Bool {
			v[i] = math.Floor(v[i])
		}
	}
	if nan && dt.IsFloat() {
		v[5] = math.NaN()
	}
	if transpose {
		return From(v, []int{33, 7}, Of(dt)).Transpose(0, 1)
	}
	return From(v, []int{7, 33}, Of(dt))
}

// checkRowKernel runs op's CPU kernel for dt on ins and compares every
// element with ref, within a tolerance for float dtypes.
func checkRowKernel(t *testing.T, op Op, dt DType, p [2]float64, ins []*Tensor, ref func(x []float64) float64) {
	t.Helper()
	info := op.info()
	dst := newTensor(info.outType(dt), []int{7, 33}, CPU)
	var in [3]*Tensor
	copy(in[:], ins)
	info.cpu[dt].run(p, dst, in)
	vals := make([][]float64, len(ins))
	for i, x := range ins {
		vals[i] = x.Float64s()
	}
	tol := map[DType]float64{Float32: 8e-6, Float64: 1e-13}[dt]
	for i, got := range dst.Float64s() {
		x := make([]float64, len(ins))
		for k := range ins {
			x[k] = vals[k][i]
		}
		want := ref(x)
		if dt == Float32 {
			want = float64(float32(want))
		}
		if dt == Int32 && info.outType(dt) == Int32 {
			want = float64(int32(want))
		}
		if !(got == want || math.IsNaN(got) && math.IsNaN(want) || math.Abs(got-want) <= tol*math.Max(math.Abs(want), 1)) {
			t.Fatalf("%v %v%v: f(%v) = %v, want %v", op, dt, fmt.Sprint(ins[0].Strides()), x, got, want)
		}
	}
}

func TestRowMath(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, op := range Ops() {
		info := op.info()
		for dt := range numDTypes {
			if info.cpu[dt] == nil {
				continue
			}
			p := opParams[dt.IsFloat()]
			for _, transpose := range []bool{false, true} {
				switch info.fam {
				case famUnary:
					ref, ok := unaryRefs[op]
					if !ok {
						t.Fatalf("%v has no reference", op)
					}
					x := opInput(r, dt, ref.lo, ref.hi, transpose, true)
					checkRowKernel(t, op, dt, p, []*Tensor{x}, func(x []float64) float64 { return ref.f(x[0], p) })
				case famBinary:
					ref, ok := binaryRefs[op]
					if !ok {
						t.Fatalf("%v has no reference", op)
					}
					lo, hi := -3.0, 4.0
					if op == OpPow {
						lo, hi = 0.1, 3
					}
					x, y := opInput(r, dt, lo, hi, transpose, true), opInput(r, dt, -2, 2, !transpose, true)
					checkRowKernel(t, op, dt, p, []*Tensor{x, y}, func(x []float64) float64 { return ref(x[0], x[1]) })
				case famTernary:
					ref, ok := ternaryRefs[op]
					if !ok {
						t.Fatalf("%v has no reference", op)
					}
					a, b, c := opInput(r, dt, -3, 3, transpose, false), opInput(r, dt, -3, 3, false, false), opInput(r, dt, 0.5, 2, true, false)
					checkRowKernel(t, op, dt, p, []*Tensor{a, b, c}, func(x []float64) float64 { return ref(x[0], x[1], x[2], p[0]) })
				}
			}
		}
	}
}
