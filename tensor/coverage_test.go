package tensor_test

// TestCoverageMatrix generates docs/coverage.md, the op × device × dtype
// coverage matrix, by running ops rather than by trusting lists: every op
// of tensor.Ops() has one representative public call in coverageCases,
// which runs on small inputs of each dtype on the CPU and, when an adapter
// opens, on the GPU. It fails when an op has no entry (or, when
// differentiable, an entry that does not record it), no CPU kernel for the
// float types, an int32 or bool result on the CPU that differs from the
// same call on those values cast to float64, a GPU outcome that differs
// from the CPU's, no derivative rule (when differentiable), or no PyTorch
// reference case (unless exempted below with the reason), and when the
// committed document no longer matches what it generates.
//
//	go test ./tensor -run TestCoverageMatrix -update-coverage   # rewrite docs/coverage.md

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/internal/opspec"
	"github.com/tessera-ml/tessera/tensor"
)

var updateCoverage = flag.Bool("update-coverage", false, "rewrite docs/coverage.md from TestCoverageMatrix's results")

const (
	coverageDoc     = "../docs/coverage.md"
	coverageCommand = "go test ./tensor -run TestCoverageMatrix -update-coverage"
)

// A covCase is one representative public call of an op on operands x and
// y, two 2×3 tensors of the dtype under test on the device under test.
// Other arguments (index tensors, masks) are built on x's device.
type covCase struct {
	fam  string // the family shown in the matrix; unary and binary ops get theirs from the op
	call func(x, y *tensor.Tensor) *tensor.Tensor
}

type torchRef = opspec.TorchRef

// coverageCases, torchRefNames and torchRefExempt are generated from the
// op specs (tensor/spec_*_test.go): each op's representative public call,
// the reference cases that call it directly (every name must match at
// least one case), and, for an op that no reference case calls directly,
// how the cases reach it.
var coverageCases, torchRefNames, torchRefExempt = covFromSpecs()

func covFromSpecs() (map[tensor.Op]covCase, map[tensor.Op][]torchRef, map[tensor.Op]opspec.RefExemption) {
	cases := map[tensor.Op]covCase{}
	names := map[tensor.Op][]torchRef{}
	exempt := map[tensor.Op]opspec.RefExemption{}
	for _, s := range opspec.Specs() {
		cases[s.Op] = covCase{fam: s.Family, call: s.Cover}
		if len(s.Torch) > 0 {
			names[s.Op] = s.Torch
		}
		if s.Via != nil {
			exempt[s.Op] = *s.Via
		}
	}
	return cases, names, exempt
}

// covDTypes are the dtypes of the matrix, in column order.
var covDTypes = []tensor.DType{tensor.Float32, tensor.Float64, tensor.Int32, tensor.Bool}

func covShort(dt tensor.DType) string {
	switch dt {
	case tensor.Float32:
		return "f32"
	case tensor.Float64:
		return "f64"
	case tensor.Int32:
		return "i32"
	}
	return dt.String()
}

// covColumns are the matrix's columns. There is no "gpu f64": float64
// lives on the CPU only.
var covColumns = []string{"op", "family", "cpu f32", "cpu f64", "cpu i32", "cpu bool", "gpu f32", "gpu i32", "gpu bool", "rule", "torch ref"}

// covInputs returns the operands x and y (2×3, dtype dt) on the CPU.
// Values are positive (and integers non-zero) so that float results stay
// free of NaN, whose handling WGSL leaves open; floats are exact in
// float32, so every dtype computes on the same numbers as Float64.
func covInputs(dt tensor.DType) (x, y *tensor.Tensor) {
	xf := []float64{0.5, 1.25, 2, 0.75, 1.5, 3}
	yf := []float64{2, 0.5, 1.5, 0.25, 1, 2.5}
	switch dt {
	case tensor.Float32:
		return tensor.New(covConvert[float32](xf), 2, 3), tensor.New(covConvert[float32](yf), 2, 3)
	case tensor.Float64:
		return tensor.New(xf, 2, 3), tensor.New(yf, 2, 3)
	case tensor.Int32:
		return tensor.New([]int32{1, 2, 3, 1, 2, 4}, 2, 3), tensor.New([]int32{2, 1, 1, 3, 1, 2}, 2, 3)
	}
	// y is true where IndexAdd and ScatterAdd add it to a false x.
	return tensor.New([]bool{true, false, true, true, true, false}, 2, 3),
		tensor.New([]bool{true, true, true, false, true, true}, 2, 3)
}

func covConvert[T float32 | float64](v []float64) []T {
	out := make([]T, len(v))
	for i, f := range v {
		out[i] = T(f)
	}
	return out
}

// A covOutcome is what one call did on one device.
type covOutcome struct {
	err   error  // the *tensor.Error the call was rejected with
	bug   string // a panic that is not a *tensor.Error, with its stack, or a result on the wrong device
	dtype tensor.DType
	shape []int
	vals  []float64
}

func (o covOutcome) ran() bool { return o.err == nil && o.bug == "" }

// cell renders the outcome for input dtype in: ✓, or ✓→dtype when the
// result has another dtype (integer inputs promoted to float, comparisons
// giving bool).
func (o covOutcome) cell(in tensor.DType) string {
	switch {
	case o.bug != "":
		return "panic"
	case o.err != nil:
		return "✗"
	case o.dtype != in:
		return "✓→" + covShort(o.dtype)
	}
	return "✓"
}

// covRun runs c on inputs of dtype dt placed on dev and reads the result
// back. With asFloat64 the inputs are first cast to Float64 on the CPU:
// the same values, computed in float64, as a reference.
func covRun(c covCase, dt tensor.DType, dev tensor.Device, asFloat64 bool) (o covOutcome) {
	x, y := covInputs(dt)
	defer x.Release()
	defer y.Release()
	defer func() {
		if r := recover(); r != nil {
			o = covOutcome{bug: fmt.Sprintf("panic: %v\n%s", r, debug.Stack())}
		}
	}()
	tensor.Scope(func() {
		o.err = tensor.Catch(func() {
			x, y := x.To(dev), y.To(dev)
			if asFloat64 {
				x, y = x.Cast(tensor.Float64), y.Cast(tensor.Float64)
			}
			out := c.call(x, y)
			if out.Device() != dev {
				o.bug = fmt.Sprintf("the result is on %v, not %v", out.Device(), dev)
			}
			o.dtype, o.shape, o.vals = out.DType(), out.Shape(), out.Float64s()
		})
	})
	return o
}

// covAgree says how a GPU outcome differs from the CPU's ("" when they
// agree): same dtype and shape, integers and bools exactly, floats within
// a float32 tolerance.
func covAgree(cpu, gpu covOutcome) string {
	if cpu.dtype != gpu.dtype || !slices.Equal(cpu.shape, gpu.shape) {
		return fmt.Sprintf("the CPU gives %v %v, the GPU %v %v", cpu.dtype, cpu.shape, gpu.dtype, gpu.shape)
	}
	return covDiff("the CPU", cpu.vals, "the GPU", gpu.vals, cpu.dtype)
}

// covMatchesRef says how an outcome on the CPU differs from the same call
// on the same values cast to Float64 ("" when it does not): the reference is
// converted to the outcome's dtype (bool: non-zero; int32: truncated) and
// compared like the GPU with the CPU. It catches a kernel that runs but
// computes nothing, such as one that lacks a case for a dtype.
func covMatchesRef(ref, o covOutcome) string {
	if !slices.Equal(ref.shape, o.shape) {
		return fmt.Sprintf("shape %v, the float64 call gives %v", o.shape, ref.shape)
	}
	want := make([]float64, len(ref.vals))
	for i, v := range ref.vals {
		switch o.dtype {
		case tensor.Bool:
			want[i] = 0
			if v != 0 {
				want[i] = 1
			}
		case tensor.Int32:
			want[i] = math.Trunc(v)
		default:
			want[i] = v
		}
	}
	return covDiff("float64", want, o.dtype.String(), o.vals, o.dtype)
}

// covDiff compares values: exactly unless dt is a float type, then
// within approx.Close32; NaN matches NaN.
func covDiff(wantName string, want []float64, gotName string, got []float64, dt tensor.DType) string {
	tol := approx.Exact
	if dt.IsFloat() {
		tol = approx.Close32
	}
	switch i := approx.Mismatch(got, want, tol); {
	case i < 0:
		return ""
	case i == len(want):
		return fmt.Sprintf("%s has %d values, %s %d", gotName, len(got), wantName, len(want))
	default:
		return fmt.Sprintf("element %d: %s %v, %s %v (%s %v, %s %v)", i, wantName, want[i], gotName, got[i], wantName, want, gotName, got)
	}
}

// covRecords reports which ops a call records in the autograd graph when
// its float64 inputs require grad, so that a table entry that misses its
// op cannot pass for it.
func covRecords(c covCase) (map[tensor.Op]bool, error) {
	x, y := covInputs(tensor.Float64)
	x.SetRequiresGrad(true)
	y.SetRequiresGrad(true)
	defer x.Release()
	defer y.Release()
	ops := map[tensor.Op]bool{}
	err := tensor.Catch(func() {
		tensor.Scope(func() {
			seen := map[*tensor.Node]bool{}
			var walk func(n *tensor.Node)
			walk = func(n *tensor.Node) {
				if n == nil || seen[n] {
					return
				}
				seen[n] = true
				ops[n.Op] = true
				for _, in := range n.Inputs {
					if in != nil {
						walk(in.Source())
					}
				}
			}
			walk(c.call(x, y).Source())
		})
	})
	return ops, err
}

// loadTorchRefCases returns the op and attrs of every reference case in
// testdata/torch/*.json (files of op cases are objects with "cases";
// others, such as format.json's list of printed tensors, hold none).
func loadTorchRefCases(t *testing.T) []torchCaseRef {
	files, err := filepath.Glob("../testdata/torch/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no reference files in testdata/torch: %v", err)
	}
	var out []torchCaseRef
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if trimmed := bytes.TrimSpace(b); len(trimmed) > 0 && trimmed[0] != '{' {
			continue
		}
		var file struct {
			Cases []torchCaseRef `json:"cases"`
		}
		if err := json.Unmarshal(b, &file); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, file.Cases...)
	}
	return out
}

type torchCaseRef struct {
	Op    string         `json:"op"`
	Attrs map[string]any `json:"attrs"`
}

// found returns the refs that match at least one case, and reports the
// others.
func refsFound(cases []torchCaseRef, refs []torchRef) (found, missing []torchRef) {
	for _, r := range refs {
		if slices.ContainsFunc(cases, func(c torchCaseRef) bool { return r.Matches(c.Op, c.Attrs) }) {
			found = append(found, r)
		} else {
			missing = append(missing, r)
		}
	}
	return found, missing
}

func joinRefs(refs []torchRef) string {
	s := make([]string, len(refs))
	for i, r := range refs {
		s[i] = r.String()
	}
	return strings.Join(s, ", ")
}

func TestCoverageMatrix(t *testing.T) {
	ops := tensor.Ops()
	for _, op := range ops {
		if _, ok := coverageCases[op]; !ok {
			t.Errorf("%v has no entry in coverageCases (tensor/spec_*_test.go): add a spec", op)
		}
	}
	for op := range coverageCases {
		if !slices.Contains(ops, op) {
			t.Errorf("coverageCases has an entry for %v, which tensor.Ops() does not list", op)
		}
	}
	cases := loadTorchRefCases(t)

	gpu, haveGPU := devtest.GPU(t)
	gpuLine := "no GPU adapter opened when this file was generated, so the GPU cells say \"not run\"."
	if haveGPU {
		gpuLine = "filled on " + covAdapter(t, gpu) + "."
		// float64 has no GPU column: check that it cannot get there.
		x, y := covInputs(tensor.Float64)
		if err := tensor.Catch(func() { x.To(gpu) }); err == nil {
			t.Errorf("a float64 tensor moved to %v without a typed error", gpu)
		}
		x.Release()
		y.Release()
	}

	var rows [][]string
	var unsupported, problems []string
	problem := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		t.Error(msg)
		problems = append(problems, covFirstLine(msg))
	}
	for _, op := range ops {
		c, ok := coverageCases[op]
		if !ok {
			continue
		}
		cells := map[string]string{"op": op.String(), "family": c.fam}
		switch {
		case op.IsUnary():
			cells["family"] = "unary"
		case op.IsBinary():
			cells["family"] = "binary"
		}
		for _, dt := range covDTypes {
			cpu := covRun(c, dt, tensor.CPU, false)
			cells["cpu "+covShort(dt)] = cpu.cell(dt)
			switch {
			case cpu.bug != "":
				problem("`%v` on cpu %v: %s", op, dt, cpu.bug)
			case cpu.err != nil && dt.IsFloat():
				problem("`%v` has no CPU kernel for %v: %v", op, dt, cpu.err)
			case cpu.err != nil:
				unsupported = append(unsupported, covFirstLine(fmt.Sprintf("`%v` on cpu %v: %v", op, dt, cpu.err)))
			case dt != tensor.Float64:
				ref := covRun(c, dt, tensor.CPU, true)
				if !ref.ran() {
					problem("`%v` on cpu %v runs but not on the same values cast to float64: %v%s", op, dt, ref.err, ref.bug)
				} else if why := covMatchesRef(ref, cpu); why != "" {
					cells["cpu "+covShort(dt)] = "≠"
					problem("`%v` on cpu %v runs but disagrees with the same call in float64: %s", op, dt, why)
				}
			}
			if dt == tensor.Float64 {
				continue
			}
			col := "gpu " + covShort(dt)
			if !haveGPU {
				cells[col] = "not run"
				continue
			}
			g := covRun(c, dt, gpu, false)
			cells[col] = g.cell(dt)
			switch {
			case g.bug != "":
				problem("`%v` on gpu %v: %s", op, dt, g.bug)
			case g.ran() && !cpu.ran():
				problem("`%v` on gpu %v runs where the CPU refuses it: %v", op, dt, cpu.err)
			case !g.ran() && cpu.ran():
				problem("`%v` on gpu %v fails where the CPU runs it: %v", op, dt, g.err)
			case g.ran():
				if why := covAgree(cpu, g); why != "" {
					cells[col] = "≠"
					problem("`%v` on gpu %v disagrees with the CPU: %s", op, dt, why)
				}
			}
		}

		switch has := autograd.HasRule(op); {
		case !op.Differentiable() && has:
			cells["rule"] = "✗ (rule for a non-differentiable op)"
			t.Errorf("%v is not differentiable but autograd has a rule for it", op)
		case !op.Differentiable():
			cells["rule"] = "n/a"
		case has:
			cells["rule"] = "✓"
		default:
			cells["rule"] = "✗"
			t.Errorf("%v is differentiable but autograd has no derivative rule for it", op)
		}
		if op.Differentiable() {
			recorded, err := covRecords(c)
			switch {
			case err != nil:
				t.Errorf("%v: the coverage call fails on float64 inputs that require grad: %v", op, err)
			case !recorded[op]:
				t.Errorf("the coverage call for %v does not record %v in the graph (it records %v)", op, op, recorded)
			}
		}

		found, missing := refsFound(cases, torchRefNames[op])
		for _, r := range missing {
			t.Errorf("torchRefNames[%v]: %v matches no case in testdata/torch", op, r)
		}
		ex, exempt := torchRefExempt[op]
		switch {
		case len(found) > 0 && exempt:
			t.Errorf("%v is exempted in torchRefExempt but reference cases call it (%s): drop the exemption", op, joinRefs(found))
			cells["torch ref"] = joinRefs(found)
		case len(found) > 0:
			cells["torch ref"] = joinRefs(found)
		case exempt:
			via, gone := refsFound(cases, ex.Via)
			for _, r := range gone {
				t.Errorf("torchRefExempt[%v]: %v matches no case in testdata/torch", op, r)
			}
			cells["torch ref"] = "via " + ex.Note
			if len(ex.Via) == 0 {
				cells["torch ref"] = ex.Note
			} else if len(via) == 0 {
				cells["torch ref"] = "✗"
			}
		default:
			cells["torch ref"] = "✗"
			t.Errorf("%v appears in no PyTorch reference case (testdata/torch/*.json): add a case, a Torch name to its spec, or Via with the reason", op)
		}

		row := make([]string, len(covColumns))
		for i, col := range covColumns {
			row[i] = cells[col]
		}
		rows = append(rows, row)
	}

	doc := renderCoverage(rows, gpuLine, unsupported, problems)
	if *updateCoverage {
		if err := os.MkdirAll(filepath.Dir(coverageDoc), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(coverageDoc, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", coverageDoc)
		return
	}
	old, err := os.ReadFile(coverageDoc)
	if err != nil {
		t.Fatalf("%v: generate it with %s", err, coverageCommand)
	}
	compareCoverage(t, string(old), rows, haveGPU)
}
