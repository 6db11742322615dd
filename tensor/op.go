package tensor

import "github.com/tessera-ml/tessera/cpu"

// An Op is a primitive operation: what a backend computes and what
// autograd differentiates. Every Tensor method is either an Op or a
// composition of Ops (Softmax of a 2-D tensor is one Op; CrossEntropy is
// LogSoftmax, Gather and a few elementwise Ops).
//
// Adding an Op is a constant here, a row in opTable, a kernel on each
// backend, a rule in package autograd (or Nondifferentiable) and a test
// case; table tests fail until all exist.
type Op uint8

const (
	OpNone Op = iota // a leaf: made from data, not computed

	unaryBegin
	OpNeg
	OpAbs
	OpSign
	OpExp
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
	OpMatMul // batched 3-D: (B,M,K)·(B,K,N); torch.matmul's rules live in MatMul
	OpCat    // along Attrs.Dim; one input per piece

	OpIndexSelect // inputs: x; Attrs.Dim, Attrs.Index (1-D int32)
	OpIndexAdd    // inputs: x, src; x with src added at Attrs.Index along Attrs.Dim
	OpGather      // inputs: x; Attrs.Dim, Attrs.Index
	OpScatterAdd  // inputs: x, src; Attrs.Dim, Attrs.Index

	numOps
)

// A family groups ops that one backend entry point runs.
type family uint8

const (
	famNone family = iota
	famUnary
	famBinary
	famOther
)

// opInfo is one row of the op table: the whole definition of an op as
// the backends see it.
type opInfo struct {
	name string
	fam  family
	// Nondifferentiable ops (comparisons, argmax) produce no gradient.
	nondiff bool
	// saves lists which inputs the derivative rule reads (by index), and
	// savesOut whether it reads the output; only those are kept alive for
	// backward and checked against in-place modification.
	saves    []int
	savesOut bool

	cpuUnary  cpu.UnaryOp
	cpuBinary cpu.BinaryOp
	// wgsl is the op's WGSL expression in x (unary) or x and y (binary),
	// and p0, p1 for scalar parameters, filled into the elementwise
	// templates of package kernels/wgsl. wgslInt replaces it for int32
	// and bool operands where the float form needs float literals or
	// float helpers.
	//
	// WGSL lets a compiler assume that no value is NaN (lavapipe folds
	// x != x to false and NaN != y to false): every expression whose
	// result for a NaN operand matters tests for NaN with the prelude's
	// isnan_, a bit test no compiler can fold.
	wgsl    string
	wgslInt string
}

// opTable is the op table, indexed by Op.
var opTable = [numOps]opInfo{
	OpNone: {name: "none"},

	OpNeg:       {name: "Neg", fam: famUnary, cpuUnary: cpu.Neg, wgsl: "-x"},
	OpAbs:       {name: "Abs", fam: famUnary, cpuUnary: cpu.Abs, saves: in0, wgsl: "abs(x)"},
	OpSign:      {name: "Sign", fam: famUnary, cpuUnary: cpu.Sign, wgsl: "select(select(select(0.0, -1.0, x < 0.0), 1.0, x > 0.0), 0.0, isnan_(x))", wgslInt: "select(select(0i, -1i, x < 0i), 1i, x > 0i)"},
	OpExp:       {name: "Exp", fam: famUnary, cpuUnary: cpu.Exp, savesOut: true, wgsl: "exp(x)"},
	OpLog:       {name: "Log", fam: famUnary, cpuUnary: cpu.Log, saves: in0, wgsl: "log(x)"},
	OpLog1p:     {name: "Log1p", fam: famUnary, cpuUnary: cpu.Log1p, saves: in0, wgsl: "log1p(x)"},
	OpSqrt:      {name: "Sqrt", fam: famUnary, cpuUnary: cpu.Sqrt, savesOut: true, wgsl: "sqrt(x)"},
	OpRsqrt:     {name: "Rsqrt", fam: famUnary, cpuUnary: cpu.Rsqrt, savesOut: true, wgsl: "inverseSqrt(x)"},
	OpSquare:    {name: "Square", fam: famUnary, cpuUnary: cpu.Square, saves: in0, wgsl: "x * x"},
	OpSin:       {name: "Sin", fam: famUnary, cpuUnary: cpu.Sin, saves: in0, wgsl: "sin(x)"},
	OpCos:       {name: "Cos", fam: famUnary, cpuUnary: cpu.Cos, saves: in0, wgsl: "cos(x)"},
	OpTanh:      {name: "Tanh", fam: famUnary, cpuUnary: cpu.Tanh, savesOut: true, wgsl: "select(tanh(x), sign(x), abs(x) > 15.0)"},
	OpSigmoid:   {name: "Sigmoid", fam: famUnary, cpuUnary: cpu.Sigmoid, savesOut: true, wgsl: "1.0 / (1.0 + exp(-x))"},
	OpReLU:      {name: "ReLU", fam: famUnary, cpuUnary: cpu.ReLU, savesOut: true, wgsl: "select(x, 0.0, x <= 0.0 && !isnan_(x))", wgslInt: "max(x, 0i)"},
	OpGELU:      {name: "GELU", fam: famUnary, cpuUnary: cpu.GELU, saves: in0, wgsl: "0.5 * x * (1.0 + erf_(x * 0.7071067811865476))"},
	OpSiLU:      {name: "SiLU", fam: famUnary, cpuUnary: cpu.SiLU, saves: in0, wgsl: "x / (1.0 + exp(-x))"},
	OpSoftplus:  {name: "Softplus", fam: famUnary, cpuUnary: cpu.Softplus, saves: in0, wgsl: "select(log1p(exp(p0 * x)) / p0, x, x * p0 > p1)"},
	OpErf:       {name: "Erf", fam: famUnary, cpuUnary: cpu.Erf, saves: in0, wgsl: "erf_(x)"},
	OpPowScalar: {name: "PowScalar", fam: famUnary, cpuUnary: cpu.PowScalar, saves: in0, wgsl: "pow_(x, p0)"},
	OpClamp:     {name: "Clamp", fam: famUnary, cpuUnary: cpu.Clamp, saves: in0, wgsl: "select(min(max(x, p0), p1), x, isnan_(x))", wgslInt: "min(max(x, p0), p1)"},
	OpAddScalar: {name: "AddScalar", fam: famUnary, cpuUnary: cpu.AddScalar, wgsl: "x + p0"},
	OpMulScalar: {name: "MulScalar", fam: famUnary, cpuUnary: cpu.MulScalar, wgsl: "x * p0"},

	OpAdd:        {name: "Add", fam: famBinary, cpuBinary: cpu.Add, wgsl: "x + y"},
	OpSub:        {name: "Sub", fam: famBinary, cpuBinary: cpu.Sub, wgsl: "x - y"},
	OpMul:        {name: "Mul", fam: famBinary, cpuBinary: cpu.Mul, saves: in01, wgsl: "x * y"},
	OpDiv:        {name: "Div", fam: famBinary, cpuBinary: cpu.Div, saves: in01, wgsl: "x / y"},
	OpPow:        {name: "Pow", fam: famBinary, cpuBinary: cpu.Pow, saves: in01, savesOut: true, wgsl: "pow_(x, y)"},
	OpMaximum:    {name: "Maximum", fam: famBinary, cpuBinary: cpu.Maximum, saves: in01, wgsl: "select(select(select(y, x, x >= y), y, isnan_(y)), x, isnan_(x))", wgslInt: "select(y, x, x >= y)"},
	OpMinimum:    {name: "Minimum", fam: famBinary, cpuBinary: cpu.Minimum, saves: in01, wgsl: "select(select(select(y, x, x <= y), y, isnan_(y)), x, isnan_(x))", wgslInt: "select(y, x, x <= y)"},
	OpEq:         {name: "Eq", fam: famBinary, cpuBinary: cpu.Eq, nondiff: true, wgsl: "x == y && !isnan_(x) && !isnan_(y)", wgslInt: "x == y"},
	OpNe:         {name: "Ne", fam: famBinary, cpuBinary: cpu.Ne, nondiff: true, wgsl: "x != y || isnan_(x) || isnan_(y)", wgslInt: "x != y"},
	OpLt:         {name: "Lt", fam: famBinary, cpuBinary: cpu.Lt, nondiff: true, wgsl: "x < y && !isnan_(x) && !isnan_(y)", wgslInt: "x < y"},
	OpLe:         {name: "Le", fam: famBinary, cpuBinary: cpu.Le, nondiff: true, wgsl: "x <= y && !isnan_(x) && !isnan_(y)", wgslInt: "x <= y"},
	OpGt:         {name: "Gt", fam: famBinary, cpuBinary: cpu.Gt, nondiff: true, wgsl: "x > y && !isnan_(x) && !isnan_(y)", wgslInt: "x > y"},
	OpGe:         {name: "Ge", fam: famBinary, cpuBinary: cpu.Ge, nondiff: true, wgsl: "x >= y && !isnan_(x) && !isnan_(y)", wgslInt: "x >= y"},
	OpLogicalAnd: {name: "LogicalAnd", fam: famBinary, cpuBinary: cpu.LogicalAnd, nondiff: true, wgsl: "x && y"},
	OpLogicalOr:  {name: "LogicalOr", fam: famBinary, cpuBinary: cpu.LogicalOr, nondiff: true, wgsl: "x || y"},

	OpWhere:   {name: "Where", fam: famOther, saves: []int{0}},
	OpAddcmul: {name: "Addcmul", fam: famOther, saves: []int{1, 2}},
	OpAddcdiv: {name: "Addcdiv", fam: famOther, saves: []int{1, 2}},
	OpCast:    {name: "Cast", fam: famOther},
	OpCopy:    {name: "Copy", fam: famOther},

	OpReshape:      {name: "Reshape", fam: famOther},
	OpPermute:      {name: "Permute", fam: famOther},
	OpSlice:        {name: "Slice", fam: famOther},
	OpExpand:       {name: "Expand", fam: famOther},
	OpSliceScatter: {name: "SliceScatter", fam: famOther},

	OpSum:        {name: "Sum", fam: famOther},
	OpAmax:       {name: "Amax", fam: famOther, saves: in0, savesOut: true},
	OpAmin:       {name: "Amin", fam: famOther, saves: in0, savesOut: true},
	OpMaxDim:     {name: "MaxDim", fam: famOther},
	OpMinDim:     {name: "MinDim", fam: famOther},
	OpArgMax:     {name: "ArgMax", fam: famOther, nondiff: true},
	OpArgMin:     {name: "ArgMin", fam: famOther, nondiff: true},
	OpCumSum:     {name: "CumSum", fam: famOther},
	OpSoftmax:    {name: "Softmax", fam: famOther, savesOut: true},
	OpLogSoftmax: {name: "LogSoftmax", fam: famOther, savesOut: true},
	OpMatMul:     {name: "MatMul", fam: famOther, saves: in01},
	OpCat:        {name: "Cat", fam: famOther},

	OpIndexSelect: {name: "IndexSelect", fam: famOther},
	OpIndexAdd:    {name: "IndexAdd", fam: famOther},
	OpGather:      {name: "Gather", fam: famOther},
	OpScatterAdd:  {name: "ScatterAdd", fam: famOther},
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
func (op Op) Differentiable() bool { return op != OpNone && !opTable[op].nondiff }

// WGSL returns the op's WGSL expression for the elementwise templates
// ("" for ops with their own kernel shape).
func (op Op) WGSL() string { return opTable[op].wgsl }

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
