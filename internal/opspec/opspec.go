// Package opspec holds the one test spec of every op of package tensor:
// its public call, its float64 reference, the domain of its inputs, the
// tolerance of its float32 results and the PyTorch reference cases that
// call it. Tests only: the tests of tensor and autograd are generated
// from it.
//
//   - the coverage matrix, docs/coverage.md (tensor/coverage_test.go):
//     Cover, Family, Torch and Via;
//   - the PyTorch reference mapping (tensor/torchref_ops_test.go): Torch
//     names without attributes of elementwise ops without parameters run
//     through Call;
//   - the CPU kernel checks (tensor's TestRowMath): Ref against each
//     kernel of the op's row, for every dtype it computes in;
//   - the GPU checks of the WGSL expression that ships (tensor's
//     TestSpecElementwiseGPU): Call on a GPU device against Ref and the
//     CPU, within Tol;
//   - the derivative-rule checks of an elementwise op that autograd's
//     tests do not list by hand (autograd/rules_spec_test.go): Call on
//     the domain, reverse, forward and second order.
//
// Every op of tensor.Ops() has exactly one spec (tensor's TestOpSpecs),
// in this package's files by family.
package opspec

import (
	"math"
	"strings"

	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/tensor"
)

// A Spec is the test spec of one op. The fields after Cover describe
// elementwise ops (unary, binary and ternary); other ops have only Cover
// and the PyTorch fields.
type Spec struct {
	Op tensor.Op
	// Family is the coverage matrix's family of an op that is not unary
	// or binary (those take theirs from the op).
	Family string
	// Cover is the representative public call of the coverage matrix on
	// two 2×3 operands x and y; elementwise ops without one run Call
	// with CoverP on x (and y).
	Cover  func(x, y *tensor.Tensor) *tensor.Tensor
	CoverP [2]float64

	// Arity is the number of operands of an elementwise op (set by the
	// list it is in; 0 for other ops).
	Arity int
	// Call is the public call of an elementwise op on its operands, with
	// scalar parameters p where it takes any.
	Call func(p [2]float64, in ...*tensor.Tensor) *tensor.Tensor
	// Ref is its float64 reference (comparisons and logical ops give 0 or
	// 1; integer inputs are whole numbers).
	Ref func(p [2]float64, x ...float64) float64
	// Domain is the range [lo, hi) of each operand (nil: [-3, 4) and
	// [-2, 2)); Whole makes every other float input a whole number, so
	// that comparisons see ties; NaN puts a NaN among the float inputs
	// on the GPU (the CPU checks always do); Tiny adds arguments scaled
	// by 2⁻²⁰.
	Domain           [][2]float64
	Whole, NaN, Tiny bool
	// Params are the parameter sets float inputs run with (nil: {0.75,
	// 1.5}); integer inputs run with IntParams.
	Params [][2]float64
	// Tol bounds a float32 result against Ref rounded to float32 (and the
	// GPU's against the CPU's); the zero Tol asks for exact results.
	Tol approx.Tol

	// Torch lists the reference cases (testdata/torch/*.json) that call
	// the op directly; Via, when none does, how they reach it.
	Torch []TorchRef
	Via   *RefExemption
}

// IntParams are the parameters integer inputs run with.
var IntParams = [2]float64{-2, 3}

// A TorchRef names reference cases: those of testdata/torch/*.json whose
// "op" field is Op and, when Attr is "key=value", whose attrs[key] is
// value ("null": absent or null; "int": a number; else that string).
type TorchRef struct{ Op, Attr string }

func (r TorchRef) String() string {
	if r.Attr == "" {
		return "`" + r.Op + "`"
	}
	return "`" + r.Op + "` (" + r.Attr + ")"
}

// Matches reports whether a case of op with attrs is one r names.
func (r TorchRef) Matches(op string, attrs map[string]any) bool {
	if op != r.Op {
		return false
	}
	if r.Attr == "" {
		return true
	}
	key, want, _ := strings.Cut(r.Attr, "=")
	v := attrs[key]
	switch want {
	case "null":
		return v == nil
	case "int":
		_, ok := v.(float64)
		return ok
	}
	return v == want
}

// A RefExemption excuses an op that no reference case calls directly.
// Via lists the cases that reach it indirectly (each must exist); an
// exemption without Via is a gap, shown as such in the matrix.
type RefExemption struct {
	Via  []TorchRef
	Note string // what the matrix shows
}

// Lists returns the spec lists as written, for the check that every op
// has exactly one.
func Lists() [][]Spec {
	return [][]Spec{withArity(unarySpecs, 1), withArity(binarySpecs, 2), withArity(ternarySpecs, 3), otherSpecs, convSpecs, attentionSpecs}
}

// Specs returns the specs, in tensor.Ops() order, with Arity set and
// Cover filled in from Call.
func Specs() []Spec {
	byOp := map[tensor.Op]Spec{}
	for _, list := range Lists() {
		for _, s := range list {
			byOp[s.Op] = s
		}
	}
	var out []Spec
	for _, op := range tensor.Ops() {
		if s, ok := byOp[op]; ok {
			out = append(out, s.withCover())
		}
	}
	return out
}

func withArity(list []Spec, n int) []Spec {
	out := make([]Spec, len(list))
	for i, s := range list {
		s.Arity = n
		out[i] = s
	}
	return out
}

// withCover fills Cover of an elementwise spec from Call and CoverP.
func (s Spec) withCover() Spec {
	if s.Cover != nil || s.Call == nil {
		return s
	}
	call, p := s.Call, s.CoverP
	if s.Arity == 1 {
		s.Cover = func(x, _ *tensor.Tensor) *tensor.Tensor { return call(p, x) }
	} else {
		s.Cover = func(x, y *tensor.Tensor) *tensor.Tensor { return call(p, x, y) }
	}
	return s
}

// Range returns the domain of operand i.
func (s Spec) Range(i int) (lo, hi float64) {
	if i < len(s.Domain) {
		return s.Domain[i][0], s.Domain[i][1]
	}
	if i == 0 {
		return -3, 4
	}
	return -2, 2
}

// FloatParams returns the parameter sets of float inputs.
func (s Spec) FloatParams() [][2]float64 {
	if s.Params == nil {
		return [][2]float64{{0.75, 1.5}}
	}
	return s.Params
}

// torch returns the TorchRefs of names without attributes.
func torch(names ...string) []TorchRef {
	refs := make([]TorchRef, len(names))
	for i, n := range names {
		refs[i] = TorchRef{Op: n}
	}
	return refs
}

func call1(f func(*tensor.Tensor) *tensor.Tensor) func(p [2]float64, in ...*tensor.Tensor) *tensor.Tensor {
	return func(_ [2]float64, in ...*tensor.Tensor) *tensor.Tensor { return f(in[0]) }
}

func call2(f func(x, y *tensor.Tensor) *tensor.Tensor) func(p [2]float64, in ...*tensor.Tensor) *tensor.Tensor {
	return func(_ [2]float64, in ...*tensor.Tensor) *tensor.Tensor { return f(in[0], in[1]) }
}

func ref1(f func(float64) float64) func(p [2]float64, x ...float64) float64 {
	return func(_ [2]float64, x ...float64) float64 { return f(x[0]) }
}

func ref2(f func(x, y float64) float64) func(p [2]float64, x ...float64) float64 {
	return func(_ [2]float64, x ...float64) float64 { return f(x[0], x[1]) }
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
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
