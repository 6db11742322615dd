package tensor

import (
	"math"

	"github.com/tessera-ml/tessera/cpu"
)

// The CPU side of the op table: each op's math as one small generic
// function, instantiated per dtype in the op's row (op.go) and handed to
// package cpu's kernels as values. A function takes the op's scalar
// parameters (Attrs.Scalars, as the backends receive them) and returns
// the element function, plus a vector function for contiguous runs where
// the loop must not pay a call per element.

// cpuKernel runs an elementwise op on the CPU for one dtype: dst =
// f(in[0], in[1], in[2]) with the op's scalar parameters p; inputs past
// the op's arity are nil. The operands have the dtype the kernel was
// built for (dst: the op's output dtype).
type cpuKernel interface {
	run(p [2]float64, dst *Tensor, in [3]*Tensor)
	// chunk returns the kernel on contiguous runs, for fused passes
	// (fuse_cpu.go).
	chunk(p [2]float64) chunkFn
}

// cpuKernels holds an op's CPU kernel for every dtype it computes in,
// indexed by the inputs' dtype; nil for the others.
type cpuKernels = [numDTypes]cpuKernel

// fn1, fn2 and fn3 are an op's function for one dtype, as kernels.
type (
	fn1[S, D cpu.Elem] func(p [2]float64) cpu.Fn1[S, D]
	fn2[S, D cpu.Elem] func(p [2]float64) cpu.Fn2[S, D]
	fn3[T cpu.Elem]    func(p [2]float64) cpu.Fn3[T]
)

func (f fn1[S, D]) run(p [2]float64, dst *Tensor, in [3]*Tensor) {
	cpu.Unary(f(p), cpuBuf[D](dst), lay(dst), cpuBuf[S](in[0]), lay(in[0]))
}

func (f fn2[S, D]) run(p [2]float64, dst *Tensor, in [3]*Tensor) {
	x, y := in[0], in[1]
	cpu.Binary(f(p), cpuBuf[D](dst), lay(dst), cpuBuf[S](x), lay(x), cpuBuf[S](y), lay(y))
}

func (f fn3[T]) run(p [2]float64, dst *Tensor, in [3]*Tensor) {
	a, b, c := in[0], in[1], in[2]
	cpu.Ternary(f(p), cpuBuf[T](dst), lay(dst), cpuBuf[T](a), lay(a), cpuBuf[T](b), lay(b), cpuBuf[T](c), lay(c))
}

// once1 and once2 build the function of an op without parameters once,
// when the table is made, rather than on every call of its kernel:
// instantiated in generic code, its vector functions are closures that
// would be allocated each time.
func once1[S, D cpu.Elem](f func(p [2]float64) cpu.Fn1[S, D]) func(p [2]float64) cpu.Fn1[S, D] {
	v := f([2]float64{})
	return func([2]float64) cpu.Fn1[S, D] { return v }
}

func once2[S, D cpu.Elem](f func(p [2]float64) cpu.Fn2[S, D]) func(p [2]float64) cpu.Fn2[S, D] {
	v := f([2]float64{})
	return func([2]float64) cpu.Fn2[S, D] { return v }
}

// k1, k2 and k3 make kernels of op functions (inferring their types).
func k1[S, D cpu.Elem](f func(p [2]float64) cpu.Fn1[S, D]) cpuKernel { return fn1[S, D](f) }
func k2[S, D cpu.Elem](f func(p [2]float64) cpu.Fn2[S, D]) cpuKernel { return fn2[S, D](f) }
func k3[T cpu.Elem](f func(p [2]float64) cpu.Fn3[T]) cpuKernel       { return fn3[T](f) }

// floats and numbers list an op's kernels for Float32 and Float64, and
// for Int32 too: the dtypes the op computes in (see opInfo.computeType).
func floats(f32, f64 cpuKernel) cpuKernels { return cpuKernels{Float32: f32, Float64: f64} }

func numbers(f32, f64, i32 cpuKernel) cpuKernels {
	return cpuKernels{Float32: f32, Float64: f64, Int32: i32}
}

// floatMath returns the kernels of a float op defined in float64: g(p)
// computes an element, rounded once to the operand's float type.
func floatMath(g func(p [2]float64) func(float64) float64) cpuKernels {
	return floats(k1(viaFloat64[float32](g)), k1(viaFloat64[float64](g)))
}

// numberMath is floatMath for ops that also compute Int32 in float64,
// whose Int32 results always lie in int32's range (Clamp).
func numberMath(g func(p [2]float64) func(float64) float64) cpuKernels {
	k := floatMath(g)
	k[Int32] = k1(viaFloat64[int32](g))
	return k
}

// wrappingMath is floatMath for ops whose Int32 results may overflow
// (AddScalar, MulScalar): i computes an element in int64 from the int32
// parameters, and the result wraps to int32 (two's complement), as the
// GPU's i32 arithmetic and PyTorch's integer ops do. Through float64 the
// low bits of a large product would be lost and an out-of-range result
// saturate.
func wrappingMath(g func(p [2]float64) func(float64) float64, i func(p [2]int64) func(int64) int64) cpuKernels {
	k := floatMath(g)
	k[Int32] = k1(func(p [2]float64) cpu.Fn1[int32, int32] {
		h := i([2]int64{int64(p[0]), int64(p[1])})
		return cpu.Fn1[int32, int32]{F: func(x int32) int32 { return int32(h(int64(x))) }}
	})
	return k
}

func viaFloat64[T cpu.Number](g func(p [2]float64) func(float64) float64) func(p [2]float64) cpu.Fn1[T, T] {
	return func(p [2]float64) cpu.Fn1[T, T] {
		h := g(p)
		return cpu.Fn1[T, T]{F: func(x T) T { return T(h(float64(x))) }}
	}
}

// fixed makes a float64 function without parameters an op function.
func fixed(g func(float64) float64) func(p [2]float64) func(float64) float64 {
	return func([2]float64) func(float64) float64 { return g }
}

// vecFor returns v as a vector function of T, or nil when v is for
// another element type (ExpVecF32 for float64).
func vecFor[T cpu.Elem, V any](v V) func(dst, x []T) {
	f, _ := any(v).(func(dst, x []T))
	return f
}

// Unary ops.

func negOf[T cpu.Number]([2]float64) cpu.Fn1[T, T] {
	return cpu.Fn1[T, T]{F: func(x T) T { return -x }, Vec: cpu.NegVec[T]}
}

func absOf[T cpu.Number]([2]float64) cpu.Fn1[T, T] {
	return cpu.Fn1[T, T]{F: func(x T) T {
		if x < 0 {
			return -x
		}
		return x
	}}
}

func signOf[T cpu.Number]([2]float64) cpu.Fn1[T, T] {
	return cpu.Fn1[T, T]{F: func(x T) T {
		switch {
		case x > 0:
			return 1
		case x < 0:
			return T(0) - 1
		}
		return 0 // sign(±0) and sign(NaN) are 0, as in PyTorch 1.13
	}}
}

func squareOf[T cpu.Number]([2]float64) cpu.Fn1[T, T] {
	return cpu.Fn1[T, T]{F: func(x T) T { return x * x }, Vec: func(dst, x []T) {
		x = x[:len(dst)]
		for i, v := range x {
			dst[i] = v * v
		}
	}}
}

// reluOf is max(x, 0) with Go's max, which keeps NaN and gives +0 for
// -0, as the element function does.
func reluOf[T cpu.Number]([2]float64) cpu.Fn1[T, T] {
	return cpu.Fn1[T, T]{F: func(x T) T {
		if x > 0 || x != x {
			return x
		}
		return 0
	}, Vec: cpu.ReLUVec[T]}
}

// expOf computes float32 contiguous runs with the AVX2 kernel.
func expOf[T cpu.Float](p [2]float64) cpu.Fn1[T, T] {
	f := viaFloat64[T](fixed(math.Exp))(p)
	f.Vec = vecFor[T](cpu.ExpVecF32)
	return f
}

func rsqrt(x float64) float64   { return 1 / math.Sqrt(x) }
func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
func gelu(x float64) float64    { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) } // exact: x·Φ(x)
func silu(x float64) float64    { return x * sigmoid(x) }

// softplus is log(1+exp(βx))/β, or x where βx > threshold: p = {β, threshold}.
func softplus(p [2]float64) func(float64) float64 {
	beta, threshold := p[0], p[1]
	return func(x float64) float64 {
		if x*beta > threshold {
			return x
		}
		return math.Log1p(math.Exp(beta*x)) / beta
	}
}

func powScalar(p [2]float64) func(float64) float64 {
	e := p[0]
	return func(x float64) float64 { return math.Pow(x, e) }
}

// clamp is min(max(x, lo), hi) with p = {lo, hi}; NaN stays NaN.
func clamp(p [2]float64) func(float64) float64 {
	lo, hi := p[0], p[1]
	return func(x float64) float64 {
		if x != x {
			return x
		}
		return math.Min(math.Max(x, lo), hi)
	}
}

func addScalar(p [2]float64) func(float64) float64 {
	a := p[0]
	return func(x float64) float64 { return x + a }
}

func mulScalar(p [2]float64) func(float64) float64 {
	a := p[0]
	return func(x float64) float64 { return x * a }
}

func addScalarInt(p [2]int64) func(int64) int64 {
	a := p[0]
	return func(x int64) int64 { return x + a }
}

func mulScalarInt(p [2]int64) func(int64) int64 {
	a := p[0]
	return func(x int64) int64 { return x * a }
}

// Binary ops. Add, Sub, Mul and Div run contiguous operands through
// package cpu's vector loops, and Add and Mul a broadcast scalar too.

func addOf[T cpu.Number]([2]float64) cpu.Fn2[T, T] {
	return cpu.Fn2[T, T]{F: func(x, y T) T { return x + y }, Vec: cpu.AddVec[T], VecScalar: cpu.AddVecScalar[T]}
}

func subOf[T cpu.Number]([2]float64) cpu.Fn2[T, T] {
	return cpu.Fn2[T, T]{F: func(x, y T) T { return x - y }, Vec: cpu.SubVec[T]}
}

func mulOf[T cpu.Number]([2]float64) cpu.Fn2[T, T] {
	return cpu.Fn2[T, T]{F: func(x, y T) T { return x * y }, Vec: cpu.MulVec[T], VecScalar: cpu.MulVecScalar[T]}
}

func divOf[T cpu.Float]([2]float64) cpu.Fn2[T, T] {
	return cpu.Fn2[T, T]{F: func(x, y T) T { return x / y }, Vec: cpu.DivVec[T]}
}

// reluBackwardOf is ReLU's gradient x at its output y: 0 where y <= 0,
// else x (a NaN y passes x on, as in PyTorch).
func reluBackwardOf[T cpu.Float]([2]float64) cpu.Fn2[T, T] {
	return cpu.Fn2[T, T]{F: func(x, y T) T {
		if y <= 0 {
			return 0
		}
		return x
	}, Vec: cpu.ReLUBackwardVec[T]}
}

func powOf[T cpu.Number]([2]float64) cpu.Fn2[T, T] {
	return cpu.Fn2[T, T]{F: func(x, y T) T { return T(math.Pow(float64(x), float64(y))) }}
}

// maximumOf is torch.maximum: NaN if either is NaN; ties return x.
func maximumOf[T cpu.Number]([2]float64) cpu.Fn2[T, T] {
	return cpu.Fn2[T, T]{F: func(x, y T) T {
		if x != x || x >= y {
			return x
		}
		return y
	}}
}

func minimumOf[T cpu.Number]([2]float64) cpu.Fn2[T, T] {
	return cpu.Fn2[T, T]{F: func(x, y T) T {
		if x != x || x <= y {
			return x
		}
		return y
	}}
}

// logical returns a logical op's kernel, on Bool only.
func logical(f func(x, y bool) bool) cpuKernels {
	return cpuKernels{Bool: k2(func([2]float64) cpu.Fn2[bool, bool] { return cpu.Fn2[bool, bool]{F: f} })}
}

// Ternary ops: p[0] is the value argument of addcmul and addcdiv,
// rounded to T first as PyTorch does.

func addcmulOf[T cpu.Float](p [2]float64) cpu.Fn3[T] {
	v := T(p[0])
	return cpu.Fn3[T]{
		F:          func(a, b, c T) T { return a + v*b*c },
		Vec:        func(d, a, b, c []T) { cpu.AddcmulVec(d, a, b, c, v) },
		VecScalarC: func(d, a, b []T, c T) { cpu.AddcmulScalarVec(d, a, b, c, v) }, // AddInPlace's a + v·b·1
	}
}

func addcdivOf[T cpu.Float](p [2]float64) cpu.Fn3[T] {
	v := T(p[0])
	return cpu.Fn3[T]{
		F:   func(a, b, c T) T { return a + v*b/c },
		Vec: func(d, a, b, c []T) { cpu.AddcdivVec(d, a, b, c, v) },
	}
}

// selects returns Where's kernels, by the dtype of the values chosen
// between (the condition is Bool).
func selects() cpuKernels {
	return cpuKernels{Float32: selectOf[float32]{}, Float64: selectOf[float64]{}, Int32: selectOf[int32]{}, Bool: selectOf[bool]{}}
}

// selectOf is dst = cond ? x : y for values of type T.
type selectOf[T cpu.Elem] struct{}

func (selectOf[T]) run(_ [2]float64, dst *Tensor, in [3]*Tensor) {
	c, x, y := in[0], in[1], in[2]
	cpu.Where(cpuBuf[T](dst), lay(dst), cpuBuf[bool](c), lay(c), cpuBuf[T](x), lay(x), cpuBuf[T](y), lay(y))
}

func (selectOf[T]) chunk([2]float64) chunkFn {
	return func(dst any, do int, in *[3]any, io *[3]int, n int) {
		d, c := dst.([]T)[do:do+n], in[0].([]bool)[io[0]:io[0]+n]
		cpu.SelectRun(d, c, in[1].([]T)[io[1]:io[1]+n], in[2].([]T)[io[2]:io[2]+n])
	}
}

// reduceImpl is the reduction side of a row: the combine on each
// device, and what an empty reduced extent gives.
type reduceImpl struct {
	// wgsl names the combine in kernels/wgsl's reduction templates
	// ("sum", "max" or "min").
	wgsl string
	// emptyOK tells whether an empty reduced extent gives the identity
	// (a sum's 0); where not, it is an error, as PyTorch's max and min.
	emptyOK bool
	// cpu holds the CPU kernels of every dtype the reduction computes
	// in, nil for the others.
	cpu [numDTypes]reduceKernel
}

// reduceKernel runs a reduction on the CPU for one dtype: over dims
// (reduce: dst is x's keepdim shape) or along one dim with the position
// of the chosen element (argReduce; only for reductions that choose an
// element, such as max and min).
type reduceKernel interface {
	reduce(dst, x *Tensor)
	argReduce(vals, idx, x *Tensor, dim int)
}

// foldKernel is a reduction for element type T with accumulator A:
// fold for reduce, and better (nil for sums) for argReduce.
type foldKernel[T, A cpu.Number] struct {
	fold   cpu.Fold[T, A]
	better func(v, best T) bool
	runs   func(best []T, at []int32, row []T, k int32) // better's fast path (cpu.ArgReduceRuns)
}

func (k foldKernel[T, A]) reduce(dst, x *Tensor) {
	cpu.Reduce(k.fold, cpuBuf[T](dst), lay(dst), cpuBuf[T](x), lay(x))
}

func (k foldKernel[T, A]) argReduce(vals, idx, x *Tensor, dim int) {
	if k.better == nil {
		panic("tensor: an arg-reduction of a reduction that chooses no element")
	}
	var vb []T
	var vl cpu.Layout
	if vals != nil {
		vb, vl = cpuBuf[T](vals), lay(vals)
	}
	cpu.ArgReduceRuns(k.better, k.runs, vb, vl, cpuBuf[int32](idx), lay(idx), cpuBuf[T](x), lay(x), dim)
}

// sumFold sums T in A (float sums accumulate in float64; int32 sums
// wrap in int32).
func sumFold[T, A cpu.Number]() foldKernel[T, A] {
	return foldKernel[T, A]{fold: cpu.Fold[T, A]{
		Add:   func(a A, v T) A { return a + A(v) },
		Merge: func(a, b A) A { return a + b },
		Out:   func(a A) T { return T(a) },
		Vec:   cpu.SumFoldVec[T, A](),
	}}
}

// maxFold and minFold are torch.amax and amin: a NaN anywhere makes the
// result NaN. Their arg-reductions pick the first maximum (minimum), NaN
// counting as both, the first NaN winning, as torch.argmax.
func maxFold[T cpu.Number]() foldKernel[T, T] {
	k := foldKernel[T, T]{fold: cpu.FoldOf(lowest[T](), maxNaN[T]), better: func(v, best T) bool {
		return v > best || (v != v && best == best)
	}, runs: cpu.ArgMaxRuns[T]}
	k.fold.Vec = cpu.MaxFoldVec[T]()
	return k
}

func minFold[T cpu.Number]() foldKernel[T, T] {
	k := foldKernel[T, T]{fold: cpu.FoldOf(highest[T](), minNaN[T]), better: func(v, best T) bool {
		return v < best || (v != v && best == best)
	}, runs: cpu.ArgMinRuns[T]}
	k.fold.Vec = cpu.MinFoldVec[T]()
	return k
}

// maxNaN and minNaN fold v into a; a NaN accumulator stays NaN.
func maxNaN[T cpu.Number](a, v T) T {
	if v > a || v != v {
		return v
	}
	return a
}

func minNaN[T cpu.Number](a, v T) T {
	if v < a || v != v {
		return v
	}
	return a
}

// lowest returns max's identity: -Inf for floats, int32's minimum.
func lowest[T cpu.Number]() T {
	if isFloat[T]() {
		return T(math.Inf(-1))
	}
	return math.MinInt32
}

// highest returns min's identity: +Inf for floats, int32's maximum.
func highest[T cpu.Number]() T {
	if isFloat[T]() {
		return T(math.Inf(1))
	}
	return math.MaxInt32
}

// isFloat reports whether T is a float type.
func isFloat[T cpu.Number]() bool { return T(1)/2 != 0 }

// The reductions' rows (shared by the ops that reduce alike: Amax,
// MaxDim and ArgMax all take a max).
var (
	sumReduce = &reduceImpl{wgsl: "sum", emptyOK: true, cpu: [numDTypes]reduceKernel{
		Float32: sumFold[float32, float64](), Float64: sumFold[float64, float64](), Int32: sumFold[int32, int32](),
	}}
	maxReduce = &reduceImpl{wgsl: "max", cpu: [numDTypes]reduceKernel{
		Float32: maxFold[float32](), Float64: maxFold[float64](), Int32: maxFold[int32](),
	}}
	minReduce = &reduceImpl{wgsl: "min", cpu: [numDTypes]reduceKernel{
		Float32: minFold[float32](), Float64: minFold[float64](), Int32: minFold[int32](),
	}}
)
