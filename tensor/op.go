package tensor

import "math"

// An Op is a primitive operation: what a backend computes and what
// autograd differentiates. Every Tensor method is either an Op or a
// composition of Ops (Softmax of a 2-D tensor is one Op; CrossEntropy is
// LogSoftmax, Gather and a few elementwise Ops).
//
// Adding an Op is a constant here and a row in opTable (for an
// elementwise op or a reduction, the row is its kernels on every backend:
// the CPU functions of opmath.go and the WGSL expression), the method
// that calls it, a rule in package autograd (or Nondifferentiable) and
// its test spec in internal/opspec, from which the coverage matrix, the
// PyTorch mapping and the kernel, GPU and rule checks are generated (and,
// for PyTorch's vectors, a line of tools/torchref/gen.py); table tests
// fail until all exist.
type Op uint8

const (
	OpNone Op = iota // a leaf: made from data, not computed

	unaryBegin
	OpNeg
	OpAbs
	OpSign
	OpExp
	OpExpm1
	OpLog
	OpLog1p
	OpSqrt
	OpRsqrt
	OpSquare
	OpSin
	OpCos
	OpTanh
	OpSigmoid
	OpReLU
	OpGELU
	OpSiLU
	OpSoftplus  // Attrs.Scalars = {beta, threshold}
	OpErf       //
	OpPowScalar // Attrs.Scalars = {exponent}
	OpClamp     // Attrs.Scalars = {min, max} (±Inf when absent)
	OpAddScalar // Attrs.Scalars = {s}
	OpMulScalar // Attrs.Scalars = {s}
	unaryEnd

	binaryBegin
	OpAdd
	OpSub
	OpMul
	OpDiv
	OpPow
	OpMaximum
	OpMinimum
	OpReLUBackward // inputs: grad, y; grad where y > 0 (or NaN), 0 where y <= 0 (ReLUBackward)
	OpEq
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
	OpLogicalAnd
	OpLogicalOr
	binaryEnd

	OpWhere   // inputs: cond, x, y
	OpAddcmul // inputs: a, b, c; Attrs.Scalars = {value}
	OpAddcdiv // inputs: a, b, c; Attrs.Scalars = {value}
	OpCast    // Attrs.DType
	OpCopy    // a contiguous copy (Contiguous, Clone)

	OpReshape      // a view with another shape; Attrs.Shape = the input's shape
	OpPermute      // Attrs.Dims = the permutation
	OpSlice        // Attrs.Dim, Start, End, Step
	OpExpand       // Attrs.Shape = the input's shape
	OpSliceScatter // zeros of Attrs.Shape with the input written into Slice(Dim, Start, End, Step)

	OpSum     // Attrs.Dims reduced, KeepDim
	OpAmax    // max over Attrs.Dims; gradient shared among ties
	OpAmin    //
	OpMaxDim  // values of max along Attrs.Dim; Attrs.Index holds the indices
	OpMinDim  //
	OpArgMax  // int32 indices along Attrs.Dim
	OpArgMin  //
	OpCumSum  // along Attrs.Dim
	OpSoftmax // along Attrs.Dim
	OpLogSoftmax
	OpMatMul    // batched 3-D (B,M,K)·(B,K,N), or operands of at most 2 dims with torch.matmul's 1-D rules (MatMul)
	OpAddmm     // inputs: input, a, b; input + a·b for matrices a and b, input broadcast (Addmm)
	OpAddmmReLU // inputs: input, a, b; Addmm's result through ReLU (AddmmReLU)
	OpCat       // along Attrs.Dim; one input per piece

	OpIndexSelect // inputs: x; Attrs.Dim, Attrs.Index (1-D int32)
	OpIndexAdd    // inputs: x, src; x with src added at Attrs.Index along Attrs.Dim
	OpGather      // inputs: x; Attrs.Dim, Attrs.Index
	OpScatterAdd  // inputs: x, src; Attrs.Dim, Attrs.Index
	OpIndexAmax   // inputs: x, src; x with src's maximum taken in at Attrs.Index along Attrs.Dim

	OpUnfold // im2col of an NCHW input: Attrs.Window, Shape = the input's, Scalars = {the padding's value}
	OpFold   // col2im, Unfold's adjoint: Attrs.Window, Shape = the output's

	OpScaledDotProductAttention         // inputs: q, k, v (N, H, D); Attrs.Offsets, Causal, Scalars = {scale}, Index = the rows' logsumexp (N, H)
	OpScaledDotProductAttentionBackward // inputs: q, k, v, out, g; as above; output (3, N, H, D): dq, dk, dv

	numOps
)

// A family groups ops that one backend entry point runs.
type family uint8

const (
	famNone      family = iota
	famUnary            // backend.unary: an elementwise op of one input
	famBinary           // backend.binary: of two inputs, broadcast
	famTernary          // backend.ternary: of three inputs, broadcast
	famReduce           // backend.reduce: over dims
	famArgReduce        // backend.argReduce: along a dim, with the index
	famOther            // an entry point of its own
)

// A promoteRule says how an elementwise op's operand dtypes become the
// dtype it computes in and the dtype it returns (see computeType).
type promoteRule uint8

const (
	// promoteArith computes in the operands' promoted dtype, made one
	// the op computes in, and returns that dtype.
	promoteArith promoteRule = iota
	// promoteCompare computes as promoteArith and returns Bool.
	promoteCompare
	// promoteLogical reads every operand as Bool and returns Bool.
	promoteLogical
)

// opInfo is one row of the op table: everything the backends, autograd's
// bookkeeping and the tests know about an op. No op is special-cased by
// name outside its row (TestNoOpSpecialCases).
type opInfo struct {
	name string
	fam  family
	// Dtype policy: the dtypes the op computes in are those its kernels
	// exist for (cpu, or reduce.cpu); promote says how operands get
	// there and what the result is.
	promote promoteRule

	// Nondifferentiable ops (comparisons, argmax) produce no gradient.
	nondiff bool
	// saves lists which inputs the derivative rule reads (by index), and
	// savesOut whether it reads the output; only those are kept alive for
	// backward and checked against in-place modification.
	saves    []int
	savesOut bool

	// cpu holds an elementwise op's CPU kernels by compute dtype
	// (opmath.go).
	cpu cpuKernels
	// wgsl is the op's WGSL expression in x (unary) or x and y (binary)
	// or x, y and z (ternary), and p0, p1 for scalar parameters, filled
	// into the elementwise templates of package kernels/wgsl. wgslInt
	// replaces it for int32 and bool operands where the float form needs
	// float literals or float helpers.
	//
	// WGSL lets a compiler assume that no value is NaN (lavapipe folds
	// x != x to false and NaN != y to false): every expression whose
	// result for a NaN operand matters tests for NaN with the prelude's
	// isnan_, a bit test no compiler can fold.
	wgsl    string
	wgslInt string
	// reduce is a reduction's combine on each device.
	reduce *reduceImpl
}

// opTable is the op table, indexed by Op.
var opTable = [numOps]opInfo{
	OpNone: {name: "none"},

	// Unary ops that compute Int32 keep integer inputs integer; the
	// others compute integer and bool inputs in Float32, as PyTorch does.
	OpNeg:       {name: "Neg", fam: famUnary, cpu: numbers(k1(once1(negOf[float32])), k1(once1(negOf[float64])), k1(once1(negOf[int32]))), wgsl: "-x"},
	OpAbs:       {name: "Abs", fam: famUnary, cpu: numbers(k1(absOf[float32]), k1(absOf[float64]), k1(absOf[int32])), saves: in0, wgsl: "abs(x)"},
	OpSign:      {name: "Sign", fam: famUnary, cpu: numbers(k1(signOf[float32]), k1(signOf[float64]), k1(signOf[int32])), wgsl: "select(select(select(0.0, -1.0, x < 0.0), 1.0, x > 0.0), 0.0, isnan_(x))", wgslInt: "select(select(0i, -1i, x < 0i), 1i, x > 0i)"},
	OpExp:       {name: "Exp", fam: famUnary, cpu: floats(k1(expOf[float32]), k1(expOf[float64])), savesOut: true, wgsl: "exp(x)"},
	OpExpm1:     {name: "Expm1", fam: famUnary, cpu: floatMath(fixed(math.Expm1)), savesOut: true, wgsl: "select(exp(x) - 1.0, x * (1.0 + x * (0.5 + x * (0.16666667 + x * (0.041666668 + x * (0.008333334 + x * (0.0013888889 + x * (0.0001984127 + x * 0.0000248016))))))), abs(x) < 0.5)"}, // a Taylor series where exp(x) - 1 cancels
	OpLog:       {name: "Log", fam: famUnary, cpu: floatMath(fixed(math.Log)), saves: in0, wgsl: "log(x)"},
	OpLog1p:     {name: "Log1p", fam: famUnary, cpu: floatMath(fixed(math.Log1p)), saves: in0, wgsl: "log1p(x)"},
	OpSqrt:      {name: "Sqrt", fam: famUnary, cpu: loopMath(cpuKernels{}, fixed(math.Sqrt), sqrtLoop[float32], sqrtLoop[float64]), savesOut: true, wgsl: "sqrt(x)"},
	OpRsqrt:     {name: "Rsqrt", fam: famUnary, cpu: floatMath(fixed(rsqrt)), savesOut: true, wgsl: "inverseSqrt(x)"},
	OpSquare:    {name: "Square", fam: famUnary, cpu: numbers(k1(squareOf[float32]), k1(squareOf[float64]), k1(squareOf[int32])), saves: in0, wgsl: "x * x"},
	OpSin:       {name: "Sin", fam: famUnary, cpu: floatMath(fixed(math.Sin)), saves: in0, wgsl: "sin(x)"},
	OpCos:       {name: "Cos", fam: famUnary, cpu: floatMath(fixed(math.Cos)), saves: in0, wgsl: "cos(x)"},
	OpTanh:      {name: "Tanh", fam: famUnary, cpu: loopMath(cpuKernels{}, fixed(math.Tanh), tanhLoop[float32], tanhLoop[float64]), savesOut: true, wgsl: "select(tanh(x), sign(x), abs(x) > 15.0)"},
	OpSigmoid:   {name: "Sigmoid", fam: famUnary, cpu: floatMath(fixed(sigmoid)), savesOut: true, wgsl: "1.0 / (1.0 + exp(-x))"},
	OpReLU:      {name: "ReLU", fam: famUnary, cpu: numbers(k1(reluOf[float32]), k1(reluOf[float64]), k1(reluOf[int32])), savesOut: true, wgsl: "select(x, 0.0, x <= 0.0 && !isnan_(x))", wgslInt: "max(x, 0i)"},
	OpGELU:      {name: "GELU", fam: famUnary, cpu: floatMath(fixed(gelu)), saves: in0, wgsl: "0.5 * x * (1.0 + erf_(x * 0.7071067811865476))"},
	OpSiLU:      {name: "SiLU", fam: famUnary, cpu: floatMath(fixed(silu)), saves: in0, wgsl: "x / (1.0 + exp(-x))"},
	OpSoftplus:  {name: "Softplus", fam: famUnary, cpu: floatMath(softplus), saves: in0, wgsl: "select(log1p(exp(p0 * x)) / p0, x, x * p0 > p1)"},
	OpErf:       {name: "Erf", fam: famUnary, cpu: floatMath(fixed(math.Erf)), saves: in0, wgsl: "erf_(x)"},
	OpPowScalar: {name: "PowScalar", fam: famUnary, cpu: floatMath(powScalar), saves: in0, wgsl: "pow_(x, p0)"},
	OpClamp:     {name: "Clamp", fam: famUnary, cpu: loopMath(numberMath(clamp), clamp, clampLoop[float32], clampLoop[float64]), saves: in0, wgsl: "select(min(max(x, p0), p1), x, isnan_(x))", wgslInt: "min(max(x, p0), p1)"},
	OpAddScalar: {name: "AddScalar", fam: famUnary, cpu: loopMath(wrappingMath(addScalar, addScalarInt), addScalar, addScalarLoop[float32], addScalarLoop[float64]), wgsl: "x + p0"},
	OpMulScalar: {name: "MulScalar", fam: famUnary, cpu: loopMath(wrappingMath(mulScalar, mulScalarInt), mulScalar, mulScalarLoop[float32], mulScalarLoop[float64]), wgsl: "x * p0"},

	// Div computes floats only: integer operands divide truly, in Float32.
	OpAdd:     {name: "Add", fam: famBinary, cpu: numbers(k2(once2(addOf[float32])), k2(once2(addOf[float64])), k2(once2(addOf[int32]))), wgsl: "x + y"},
	OpSub:     {name: "Sub", fam: famBinary, cpu: numbers(k2(once2(subOf[float32])), k2(once2(subOf[float64])), k2(once2(subOf[int32]))), wgsl: "x - y"},
	OpMul:     {name: "Mul", fam: famBinary, cpu: numbers(k2(once2(mulOf[float32])), k2(once2(mulOf[float64])), k2(once2(mulOf[int32]))), saves: in01, wgsl: "x * y"},
	OpDiv:     {name: "Div", fam: famBinary, cpu: floats(k2(once2(divOf[float32])), k2(once2(divOf[float64]))), saves: in01, wgsl: "x / y"},
	OpPow:     {name: "Pow", fam: famBinary, cpu: numbers(k2(powOf[float32]), k2(powOf[float64]), k2(powOf[int32])), saves: in01, savesOut: true, wgsl: "pow_(x, y)"},
	OpMaximum: {name: "Maximum", fam: famBinary, cpu: numbers(k2(maximumOf[float32]), k2(maximumOf[float64]), k2(maximumOf[int32])), saves: in01, wgsl: "select(select(select(y, x, x >= y), y, isnan_(y)), x, isnan_(x))", wgslInt: "select(y, x, x >= y)"},
	OpMinimum: {name: "Minimum", fam: famBinary, cpu: numbers(k2(minimumOf[float32]), k2(minimumOf[float64]), k2(minimumOf[int32])), saves: in01, wgsl: "select(select(select(y, x, x <= y), y, isnan_(y)), x, isnan_(x))", wgslInt: "select(y, x, x <= y)"},
	// ReLUBackward is ReLU's gradient in one pass rather than a mask and
	// a Where (PyTorch's threshold_backward(grad, y, 0)).
	OpReLUBackward: {name: "ReLUBackward", fam: famBinary, cpu: floats(k2(once2(reluBackwardOf[float32])), k2(once2(reluBackwardOf[float64]))), saves: []int{1}, wgsl: "select(x, 0.0, y <= 0.0 && !isnan_(y))"},
	OpEq:           {name: "Eq", fam: famBinary, promote: promoteCompare, cpu: compare(cmpEq), nondiff: true, wgsl: "x == y && !isnan_(x) && !isnan_(y)", wgslInt: "x == y"},
	OpNe:           {name: "Ne", fam: famBinary, promote: promoteCompare, cpu: compare(cmpNe), nondiff: true, wgsl: "x != y || isnan_(x) || isnan_(y)", wgslInt: "x != y"},
	OpLt:           {name: "Lt", fam: famBinary, promote: promoteCompare, cpu: compare(cmpLt), nondiff: true, wgsl: "x < y && !isnan_(x) && !isnan_(y)", wgslInt: "x < y"},
	OpLe:           {name: "Le", fam: famBinary, promote: promoteCompare, cpu: compare(cmpLe), nondiff: true, wgsl: "x <= y && !isnan_(x) && !isnan_(y)", wgslInt: "x <= y"},
	OpGt:           {name: "Gt", fam: famBinary, promote: promoteCompare, cpu: compare(cmpGt), nondiff: true, wgsl: "x > y && !isnan_(x) && !isnan_(y)", wgslInt: "x > y"},
	OpGe:           {name: "Ge", fam: famBinary, promote: promoteCompare, cpu: compare(cmpGe), nondiff: true, wgsl: "x >= y && !isnan_(x) && !isnan_(y)", wgslInt: "x >= y"},
	OpLogicalAnd:   {name: "LogicalAnd", fam: famBinary, promote: promoteLogical, cpu: logical(func(x, y bool) bool { return x && y }), nondiff: true, wgsl: "x && y"},
	OpLogicalOr:    {name: "LogicalOr", fam: famBinary, promote: promoteLogical, cpu: logical(func(x, y bool) bool { return x || y }), nondiff: true, wgsl: "x || y"},

	OpWhere:   {name: "Where", fam: famOther, cpu: selects(), saves: []int{0}, wgsl: "select(z, y, x)"}, // inputs: cond, x, y; kernels by x's dtype
	OpAddcmul: {name: "Addcmul", fam: famTernary, cpu: floats(k3(addcmulOf[float32]), k3(addcmulOf[float64])), saves: []int{1, 2}, wgsl: "x + p0 * y * z"},
	OpAddcdiv: {name: "Addcdiv", fam: famTernary, cpu: floats(k3(addcdivOf[float32]), k3(addcdivOf[float64])), saves: []int{1, 2}, wgsl: "x + p0 * y / z"},
	OpCast:    {name: "Cast", fam: famOther},
	OpCopy:    {name: "Copy", fam: famOther},

	OpReshape:      {name: "Reshape", fam: famOther},
	OpPermute:      {name: "Permute", fam: famOther},
	OpSlice:        {name: "Slice", fam: famOther},
	OpExpand:       {name: "Expand", fam: famOther},
	OpSliceScatter: {name: "SliceScatter", fam: famOther},

	OpSum:        {name: "Sum", fam: famReduce, reduce: sumReduce},
	OpAmax:       {name: "Amax", fam: famReduce, reduce: maxReduce, saves: in0, savesOut: true},
	OpAmin:       {name: "Amin", fam: famReduce, reduce: minReduce, saves: in0, savesOut: true},
	OpMaxDim:     {name: "MaxDim", fam: famArgReduce, reduce: maxReduce},
	OpMinDim:     {name: "MinDim", fam: famArgReduce, reduce: minReduce},
	OpArgMax:     {name: "ArgMax", fam: famArgReduce, reduce: maxReduce, nondiff: true},
	OpArgMin:     {name: "ArgMin", fam: famArgReduce, reduce: minReduce, nondiff: true},
	OpCumSum:     {name: "CumSum", fam: famOther},
	OpSoftmax:    {name: "Softmax", fam: famOther, savesOut: true},
	OpLogSoftmax: {name: "LogSoftmax", fam: famOther, savesOut: true},
	OpMatMul:     {name: "MatMul", fam: famOther, saves: in01},
	OpAddmm:      {name: "Addmm", fam: famOther, saves: []int{1, 2}},
	OpAddmmReLU:  {name: "AddmmReLU", fam: famOther, saves: []int{1, 2}, savesOut: true},
	OpCat:        {name: "Cat", fam: famOther},

	OpIndexSelect: {name: "IndexSelect", fam: famOther},
	OpIndexAdd:    {name: "IndexAdd", fam: famOther},
	OpGather:      {name: "Gather", fam: famOther},
	OpScatterAdd:  {name: "ScatterAdd", fam: famOther},
	OpIndexAmax:   {name: "IndexAmax", fam: famOther, saves: in01, savesOut: true},

	OpUnfold: {name: "Unfold", fam: famOther},
	OpFold:   {name: "Fold", fam: famOther},

	OpScaledDotProductAttention: {name: "ScaledDotProductAttention", fam: famOther, saves: []int{0, 1, 2}, savesOut: true},
	// The backward runs inside the attention's reverse rule, with grad
	// off; differentiating the attention twice goes through autograd's
	// composite rule instead, so this op has no derivative of its own.
	OpScaledDotProductAttentionBackward: {name: "ScaledDotProductAttentionBackward", fam: famOther, nondiff: true},
}

var (
	in0  = []int{0}
	in01 = []int{0, 1}
)

func (op Op) String() string {
	if op < numOps && opTable[op].name != "" {
		return opTable[op].name
	}
	return "Op(?)"
}

// IsUnary reports whether op is a one-input elementwise op.
func (op Op) IsUnary() bool { return unaryBegin < op && op < unaryEnd }

// IsBinary reports whether op is a two-input elementwise op.
func (op Op) IsBinary() bool { return binaryBegin < op && op < binaryEnd }

// Differentiable reports whether gradients flow through op.
func (op Op) Differentiable() bool { return op != OpNone && op < numOps && !opTable[op].nondiff }

// WGSL returns the op's WGSL expression for the elementwise templates
// ("" for ops with their own kernel shape).
func (op Op) WGSL() string {
	if op >= numOps {
		return ""
	}
	return opTable[op].wgsl
}

// Ops returns every op but OpNone, for completeness tests.
func Ops() []Op {
	ops := make([]Op, 0, numOps)
	for op := OpNone + 1; op < numOps; op++ {
		if op == unaryBegin || op == unaryEnd || op == binaryBegin || op == binaryEnd {
			continue
		}
		ops = append(ops, op)
	}
	return ops
}

// info returns op's row.
func (op Op) info() *opInfo { return &opTable[op] }

// computes reports whether the op has kernels for dtype dt.
func (o *opInfo) computes(dt DType) bool {
	if o.reduce != nil {
		return o.reduce.cpu[dt] != nil
	}
	return o.cpu[dt] != nil
}

// computeType returns the dtype the op computes operands of (promoted)
// dtype dt in; intScalars tells whether its scalar parameters are all
// int32 values (a float scalar lifts integer tensors to Float32, as
// PyTorch's Python floats do; Go cannot tell 2 from 2.0). Bool counts as
// Int32 in arithmetic, and dtypes the op does not compute in become
// Float32: Exp of an integer tensor, or integer Div (true division).
// Logical ops compute in Bool.
func (o *opInfo) computeType(dt DType, intScalars bool) DType {
	if o.promote == promoteLogical {
		return Bool
	}
	if !dt.IsFloat() && !intScalars {
		dt = Float32
	}
	if dt == Bool {
		dt = Int32
	}
	if !o.computes(dt) {
		dt = Float32
	}
	return dt
}

// outType returns the dtype of the op's result when it computes in ct.
func (o *opInfo) outType(ct DType) DType {
	if o.promote != promoteArith {
		return Bool
	}
	return ct
}

// wgslFor returns the op's WGSL expression for operands of type dt: the
// float form, or the int32/bool form where there is one.
func (o *opInfo) wgslFor(dt DType) string {
	if dt != Float32 && o.wgslInt != "" {
		return o.wgslInt
	}
	return o.wgsl
}
