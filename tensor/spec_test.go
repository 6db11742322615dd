package tensor

import (
	"math"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/internal/approx"
)

// An OpSpec is the one test spec of an op: its public call, its float64
// reference, the domain of its inputs, the tolerance of its float32
// results and the PyTorch reference cases that call it. Every op of
// Ops() has exactly one (TestOpSpecs), in spec_*_test.go by family, and
// the tests are generated from them:
//
//   - the coverage matrix, docs/coverage.md (coverage_test.go): Cover,
//     Family, Torch and Via;
//   - the PyTorch reference mapping (torchref_ops_test.go): Torch names
//     without attributes of elementwise ops without parameters are run
//     through Call;
//   - the CPU kernel checks (TestRowMath, opmath_test.go): Ref against
//     each kernel of the row, every dtype it computes in;
//   - the GPU checks of the WGSL expression that ships
//     (spec_gpu_test.go): Call on a GPU device against Ref and the CPU,
//     within Tol.
//
// The fields after Family describe elementwise ops (unary, binary and
// ternary); other ops have only Cover and the PyTorch fields.
type OpSpec struct {
	Op Op
	// Family is the coverage matrix's family of an op that is not unary
	// or binary (those take theirs from the op).
	Family string
	// Cover is the representative public call of the coverage matrix on
	// two 2×3 operands x and y; elementwise ops without one run Call
	// with CoverP on x (and y).
	Cover  func(x, y *Tensor) *Tensor
	CoverP [2]float64

	// Call is the public call of an elementwise op on its operands, with
	// scalar parameters p where it takes any.
	Call func(p [2]float64, in ...*Tensor) *Tensor
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
	// 1.5}); integer inputs run with {-2, 3}.
	Params [][2]float64
	// Tol bounds a float32 result against Ref rounded to float32 (and the
	// GPU's against the CPU's); the zero Tol asks for exact results.
	Tol approx.Tol

	// Torch lists the reference cases (testdata/torch/*.json) that call
	// the op directly; Via, when none does, how they reach it.
	Torch []TorchRef
	Via   *RefExemption
}

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

// torch returns the TorchRefs of names without attributes.
func torch(names ...string) []TorchRef {
	refs := make([]TorchRef, len(names))
	for i, n := range names {
		refs[i] = TorchRef{Op: n}
	}
	return refs
}

// specLists are the spec files' lists.
var specLists = [][]OpSpec{unarySpecs, binarySpecs, otherSpecs, convSpecs}

// Specs returns the op specs, in Ops() order, for package tensor_test.
func Specs() []OpSpec {
	byOp := map[Op]OpSpec{}
	for _, list := range specLists {
		for _, s := range list {
			byOp[s.Op] = s
		}
	}
	var out []OpSpec
	for _, op := range Ops() {
		if s, ok := byOp[op]; ok {
			out = append(out, s.withDefaults())
		}
	}
	return out
}

// withDefaults fills Cover of an elementwise spec from Call and CoverP.
func (s OpSpec) withDefaults() OpSpec {
	if s.Cover != nil || s.Call == nil {
		return s
	}
	call, p := s.Call, s.CoverP
	if s.Op.info().fam == famUnary {
		s.Cover = func(x, _ *Tensor) *Tensor { return call(p, x) }
	} else {
		s.Cover = func(x, y *Tensor) *Tensor { return call(p, x, y) }
	}
	return s
}

// Arity is the number of operands of an elementwise op (0 for others).
func (s OpSpec) Arity() int {
	switch s.Op.info().fam {
	case famUnary:
		return 1
	case famBinary:
		return 2
	case famTernary:
		return 3
	}
	return 0
}

// Range returns the domain of operand i.
func (s OpSpec) Range(i int) (lo, hi float64) {
	if i < len(s.Domain) {
		return s.Domain[i][0], s.Domain[i][1]
	}
	if i == 0 {
		return -3, 4
	}
	return -2, 2
}

// FloatParams returns the parameter sets of float inputs.
func (s OpSpec) FloatParams() [][2]float64 {
	if s.Params == nil {
		return [][2]float64{{0.75, 1.5}}
	}
	return s.Params
}

// IntParams are the parameters integer inputs run with.
var IntParams = [2]float64{-2, 3}

// TestOpSpecs checks that every op has exactly one spec, with a public
// call, and that every elementwise op has a reference.
func TestOpSpecs(t *testing.T) {
	seen := map[Op]int{}
	for _, list := range specLists {
		for _, s := range list {
			seen[s.Op]++
		}
	}
	for _, op := range Ops() {
		if seen[op] != 1 {
			t.Errorf("%v has %d specs in spec_*_test.go, want 1", op, seen[op])
		}
		delete(seen, op)
	}
	for op := range seen {
		t.Errorf("a spec names %v, which Ops() does not list", op)
	}
	for _, s := range Specs() {
		if s.Cover == nil {
			t.Errorf("%v: the spec has no public call (Cover or Call)", s.Op)
		}
		if s.Arity() > 0 && (s.Call == nil || s.Ref == nil) {
			t.Errorf("%v is elementwise: its spec needs Call and Ref", s.Op)
		}
		if len(s.Torch) > 0 && s.Via != nil {
			t.Errorf("%v: a spec has Torch names or Via, not both", s.Op)
		}
	}
}

// Helpers for the specs.

func call1(f func(*Tensor) *Tensor) func(p [2]float64, in ...*Tensor) *Tensor {
	return func(_ [2]float64, in ...*Tensor) *Tensor { return f(in[0]) }
}

func call2(f func(x, y *Tensor) *Tensor) func(p [2]float64, in ...*Tensor) *Tensor {
	return func(_ [2]float64, in ...*Tensor) *Tensor { return f(in[0], in[1]) }
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
