package tensor_test

import (
	"errors"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/device"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/tensor"
)

// TestGPUNaNAndInfRows compares softmax, log-softmax and the max/min
// family on rows holding NaN, +Inf and all -Inf between the GPU and the
// CPU (NaN positions, values, indices), and against PyTorch's rules: a
// NaN anywhere in a row makes its softmax all NaN, a row of -Inf gives
// NaN, max and argmax propagate NaN and point at the first NaN, and ties
// go to the first index. A tree reduction built on max() (which drops
// NaN in WGSL) or on an unordered comparison fails it.
func TestGPUNaNAndInfRows(t *testing.T) {
	dev := gpuOrSkip(t)
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	small := [][]float32{
		{1, nan, 2, 0},
		{1, inf, 2, 0},
		{-inf, -inf, -inf, -inf},
		{-inf, 0, 1, -inf},
		{inf, inf, 0, 1},
		{3, 5, 5, 1},
		{nan, 1, nan, 2},
		{-inf, nan, inf, 0},
		{0.5, -1, 2, 2},
	}
	// Wide rows, longer than a workgroup, so that the tree reduction
	// combines partial results holding the NaN or Inf.
	const wide = 1000
	var wideRows [][]float32
	for r := range 6 {
		row := randFloats(uint64(51+r), wide)
		switch r {
		case 0:
			row[700] = nan
		case 1:
			row[999] = nan
			row[3] = nan
		case 2:
			row[517] = inf
		case 3:
			for i := range row {
				row[i] = -inf
			}
		case 4:
			row[0] = 100 // a tie at the ends: the first wins
			row[999] = 100
		}
		wideRows = append(wideRows, row)
	}
	for _, set := range []struct {
		name string
		rows [][]float32
	}{{"4 columns", small}, {"1000 columns", wideRows}} {
		t.Run(set.name, func(t *testing.T) {
			rows, cols := len(set.rows), len(set.rows[0])
			flat := slices.Concat(set.rows...)
			ops := []struct {
				name string
				f    func(x *tensor.Tensor) *tensor.Tensor
			}{
				{"Softmax(1)", func(x *tensor.Tensor) *tensor.Tensor { return x.Softmax(1) }},
				{"LogSoftmax(1)", func(x *tensor.Tensor) *tensor.Tensor { return x.LogSoftmax(1) }},
				{"Softmax(0)", func(x *tensor.Tensor) *tensor.Tensor { return x.Softmax(0) }},
				{"LogSoftmax(0)", func(x *tensor.Tensor) *tensor.Tensor { return x.LogSoftmax(0) }},
				{"Max", func(x *tensor.Tensor) *tensor.Tensor { return x.Max() }},
				{"Min", func(x *tensor.Tensor) *tensor.Tensor { return x.Min() }},
				{"Amax(1)", func(x *tensor.Tensor) *tensor.Tensor { return x.Amax([]int{1}, false) }},
				{"Amin(1)", func(x *tensor.Tensor) *tensor.Tensor { return x.Amin([]int{1}, false) }},
				{"Amax(0)", func(x *tensor.Tensor) *tensor.Tensor { return x.Amax([]int{0}, false) }},
				{"MaxDim(1) values", func(x *tensor.Tensor) *tensor.Tensor { v, _ := x.MaxDim(1, false); return v }},
				{"MaxDim(1) indices", func(x *tensor.Tensor) *tensor.Tensor { _, i := x.MaxDim(1, false); return i }},
				{"MinDim(1) values", func(x *tensor.Tensor) *tensor.Tensor { v, _ := x.MinDim(1, false); return v }},
				{"MinDim(1) indices", func(x *tensor.Tensor) *tensor.Tensor { _, i := x.MinDim(1, false); return i }},
				{"MaxDim(0) indices", func(x *tensor.Tensor) *tensor.Tensor { _, i := x.MaxDim(0, false); return i }},
				{"ArgMax", func(x *tensor.Tensor) *tensor.Tensor { return x.ArgMax() }},
				{"ArgMin", func(x *tensor.Tensor) *tensor.Tensor { return x.ArgMin() }},
				{"ArgMaxDim(1)", func(x *tensor.Tensor) *tensor.Tensor { return x.ArgMaxDim(1, false) }},
				{"LogSumExp(1)", func(x *tensor.Tensor) *tensor.Tensor { return x.LogSumExp([]int{1}, false) }},
			}
			results := map[string][2]any{}
			for _, op := range ops {
				var res [2]any
				for k, d := range []tensor.Device{tensor.CPU, dev} {
					ok(t, op.name+" on "+d.String(), func() {
						tensor.Scope(func() {
							x := tensor.New(flat, rows, cols).To(d)
							res[k] = hostOf(op.f(x))
						})
					})
				}
				if res[0] == nil || res[1] == nil {
					t.FailNow()
				}
				results[op.name] = res
				approx.CheckAny(t, op.name+": GPU against CPU", res[1], res[0], approx.Rel1(1e-5))
			}
			// PyTorch's rules, on the GPU's results.
			sm := results["Softmax(1)"][1].([]float32)
			maxv := results["MaxDim(1) values"][1].([]float32)
			maxi := results["MaxDim(1) indices"][1].([]int32)
			for r, row := range set.rows {
				firstNaN, allNegInf := -1, true
				for i, v := range row {
					if firstNaN < 0 && v != v {
						firstNaN = i
					}
					allNegInf = allNegInf && math.IsInf(float64(v), -1)
				}
				if firstNaN >= 0 || allNegInf {
					for i := range cols {
						if v := sm[r*cols+i]; v == v {
							t.Errorf("row %d (%s): softmax[%d] = %v, want NaN", r, abridge(row), i, v)
							break
						}
					}
				}
				if firstNaN >= 0 {
					if v := maxv[r]; v == v {
						t.Errorf("row %d: MaxDim value %v, want NaN", r, v)
					}
					if maxi[r] != int32(firstNaN) {
						t.Errorf("row %d: MaxDim index %d, want %d (the first NaN)", r, maxi[r], firstNaN)
					}
				}
			}
			if v := results["Max"][1].([]float32)[0]; v == v {
				t.Errorf("Max of a tensor holding NaN = %v, want NaN", v)
			}
			firstNaN := slices.IndexFunc(flat, func(v float32) bool { return v != v })
			if got := results["ArgMax"][1].([]int32)[0]; got != int32(firstNaN) {
				t.Errorf("ArgMax = %d, want %d (the first NaN)", got, firstNaN)
			}
		})
	}
}

// TestGPUBudgetOutOfMemory sets a budget smaller than the working set:
// allocating beyond it must panic with a *tensor.Error wrapping
// device.ErrOutOfMemory (an *device.OOMError that names the budget and
// TESSERA_GPU_BUDGET), which tensor.Catch turns into an error; the process
// keeps running, nothing leaks from the failed op, and once tensors are
// released and the budget restored allocation and compute work again. A
// runtime that lets the driver fail aborts the process here (wgpu-native
// aborts on a real out-of-memory), so this budget is the only guard.
func TestGPUBudgetOutOfMemory(t *testing.T) {
	eagerOnly(t) // pending constants hold no memory, so the held tensors would never fill the budget
	dev := gpuOrSkip(t)
	g := gpuRuntime(t, dev)
	if err := tensor.Sync(dev); err != nil {
		t.Fatal(err)
	}
	settle(t) // earlier tests' garbage freed now, not during the test
	g.EmptyCache()
	base := g.Stats()
	const mib = 1 << 20
	budget := base.Reserved + 8*mib
	g.SetBudget(budget)

	isOOM := func(what string, err error) {
		t.Helper()
		var te *tensor.Error
		var oom *device.OOMError
		switch {
		case err == nil:
			t.Fatalf("%s: no error over a %d-byte budget", what, budget)
		case !errors.As(err, &te):
			t.Fatalf("%s: %T %v, want a *tensor.Error", what, err, err)
		case !errors.Is(err, device.ErrOutOfMemory) || !errors.As(err, &oom):
			t.Fatalf("%s: %v does not wrap device.ErrOutOfMemory", what, err)
		case oom.Budget != budget:
			t.Errorf("%s: the error reports a budget of %d, want %d", what, oom.Budget, budget)
		case !strings.Contains(err.Error(), device.BudgetEnv):
			t.Errorf("%s: the message does not name %s: %v", what, device.BudgetEnv, err)
		}
	}

	// One tensor larger than the whole budget.
	err := tensor.Catch(func() { tensor.Zeros([]int{4 * mib}, tensor.On(dev)) }) // 16 MiB
	isOOM("a 16 MiB tensor", err)
	t.Logf("%v", err)

	// Many tensors: the working set outgrows the budget.
	var held []*tensor.Tensor
	err = tensor.Catch(func() {
		for range 64 {
			held = append(held, tensor.Full([]int{mib / 4}, 1, tensor.On(dev))) // 1 MiB each
		}
	})
	isOOM("the 1 MiB tensors", err)
	if len(held) < 4 || len(held) > 9 {
		t.Errorf("%d 1-MiB tensors fit in an 8 MiB budget", len(held))
	}
	if s := g.Stats(); s.Reserved > budget {
		t.Errorf("%d bytes reserved over a %d budget", s.Reserved, budget)
	}

	// An op whose output does not fit, inside a Scope: the Scope's
	// temporaries are released, and the held tensors still read right.
	before := g.Stats().Allocated
	err = tensor.Catch(func() {
		tensor.Scope(func() {
			a := held[0].Reshape(512, 512)
			for range 16 {
				a = a.MatMul(held[1].Reshape(512, 512)).MulScalar(1.0 / 512)
			}
		})
	})
	isOOM("a chain of matmuls over the budget", err)
	if after := g.Stats().Allocated; after != before {
		t.Errorf("%d bytes allocated after the failed Scope, %d before", after, before)
	}
	// Reading back needs no GPU memory: the budget is still full.
	for i, x := range held {
		if v := x.Float32s(); slices.ContainsFunc(v, func(e float32) bool { return e != 1 }) {
			t.Fatalf("tensor %d allocated before the errors no longer holds ones", i)
		}
	}

	// Releasing makes room again under the same budget.
	for _, x := range held[2:] {
		x.Release()
	}
	tensor.Scope(func() {
		y := held[0].Add(held[1])
		if got := y.Sum().Item(); got != 2*mib/4 {
			t.Errorf("after releasing: sum %v, want %d", got, 2*mib/4)
		}
	})

	// Restore the budget: a working set far above the old budget fits.
	g.SetBudget(base.Budget)
	held[0].Release()
	held[1].Release()
	tensor.Scope(func() {
		big := tensor.Ones([]int{16 * mib / 4}, tensor.On(dev)) // 16 MiB
		z := big.MulScalar(3).Add(big)
		if got := z.Sum().Item(); got != 4*16*mib/4 {
			t.Errorf("after restoring the budget: sum %v, want %d", got, 4*16*mib/4)
		}
	})
	if s := g.Stats(); s.Allocated != base.Allocated {
		t.Errorf("%d bytes allocated at the end, %d at the start", s.Allocated, base.Allocated)
	}
}

// TestGPUDeviceErrorsAndTransfers: mixing devices in one op is a typed
// ErrDevice naming both devices; float64 cannot go to the GPU (a typed
// ErrDType, never a silent downcast); To round-trips float32 (NaN, ±Inf,
// -0, subnormals, bit for bit), int32 (the extremes) and bool in both
// directions, contiguous or not.
func TestGPUDeviceErrorsAndTransfers(t *testing.T) {
	dev := gpuOrSkip(t)
	tensor.Scope(func() {
		c := tensor.Ones([]int{4, 4})
		gp := tensor.Ones([]int{4, 4}, tensor.On(dev))
		idx := tensor.New([]int32{0, 1})
		mixed := map[string]func(){
			"Add":            func() { c.Add(gp) },
			"Add (reversed)": func() { gp.Add(c) },
			"MatMul":         func() { gp.MatMul(c) },
			"Where":          func() { tensor.Where(gp.GtScalar(0), c, gp) },
			"Addcmul":        func() { tensor.Addcmul(gp, gp, c, 1) },
			"Cat":            func() { tensor.Cat([]*tensor.Tensor{gp, c}, 0) },
			"IndexSelect":    func() { gp.IndexSelect(0, idx) },
			"AddInPlace":     func() { gp.AddInPlace(c, 1) },
			"CopyFrom":       func() { gp.CopyFrom(c) },
		}
		for name, f := range mixed {
			err := tensor.Catch(f)
			var te *tensor.Error
			if !errors.As(err, &te) || !errors.Is(err, tensor.ErrDevice) {
				t.Errorf("%s across cpu and %v: got %v, want a *tensor.Error wrapping ErrDevice", name, dev, err)
				continue
			}
			msg := err.Error()
			if !strings.Contains(msg, "cpu") || !strings.Contains(msg, dev.String()) {
				t.Errorf("%s: the message does not name both devices: %s", name, msg)
			}
		}

		f64 := tensor.New([]float64{1, 2, 3})
		for name, f := range map[string]func(){
			"To":                func() { f64.To(dev) },
			"Zeros(Float64)":    func() { tensor.Zeros([]int{3}, tensor.Of(tensor.Float64), tensor.On(dev)) },
			"Cast(Float64)":     func() { gp.Cast(tensor.Float64) },
			"Randn(Float64)":    func() { tensor.Randn([]int{3}, tensor.Of(tensor.Float64), tensor.On(dev)) },
			"Full(Float64)":     func() { tensor.Full([]int{3}, 1, tensor.Of(tensor.Float64), tensor.On(dev)) },
			"Arange(Float64)":   func() { tensor.Arange(0, 3, 1, tensor.Of(tensor.Float64), tensor.On(dev)) },
			"a promoted result": func() { gp.Select(0, 0).Slice(0, 0, 3, 1).To(tensor.CPU).Add(f64).To(dev) },
		} {
			err, bug := catchAny(f)
			if bug != nil {
				t.Errorf("float64 on %v (%s): panics with %v, not a *tensor.Error", dev, name, bug)
				continue
			}
			var te *tensor.Error
			if !errors.As(err, &te) || !errors.Is(err, tensor.ErrDType) {
				t.Errorf("float64 on %v (%s): got %v, want a *tensor.Error wrapping ErrDType", dev, name, err)
			}
		}

		// Round trips, both ways, bit for bit.
		nan := math.Float32frombits(0x7fc00001)
		fs := []float32{0, float32(math.Copysign(0, -1)), 1, -1.5, nan, float32(math.Inf(1)), float32(math.Inf(-1)),
			math.Float32frombits(1), math.SmallestNonzeroFloat32 * 3, math.MaxFloat32, -math.MaxFloat32, 3.14159}
		is := []int32{0, 1, -1, math.MaxInt32, math.MinInt32, 123456789, -7, 42, 8, 9, 10, 11}
		bs := []bool{true, false, false, true, true, true, false, false, true, false, true, true}
		for _, src := range []*tensor.Tensor{tensor.New(fs, 3, 4), tensor.New(is, 3, 4), tensor.New(bs, 3, 4)} {
			dt := src.DType()
			up := src.To(dev)
			if up.Device() != dev || up.DType() != dt || !slices.Equal(up.Shape(), []int{3, 4}) {
				t.Fatalf("%v To(%v): device %v, dtype %v, shape %v", dt, dev, up.Device(), up.DType(), up.Shape())
			}
			if up.To(dev) != up {
				t.Errorf("%v: To the device a tensor is on made a copy", dt)
			}
			down := up.To(tensor.CPU)
			if down.Device() != tensor.CPU {
				t.Fatalf("%v To(cpu) is on %v", dt, down.Device())
			}
			// GPU -> CPU -> GPU, and a transposed (non-contiguous) GPU view.
			again := down.To(dev)
			tr := up.T().To(tensor.CPU)
			trWant := src.T().Contiguous()
			switch dt {
			case tensor.Float32:
				for name, got := range map[string][]float32{"cpu->gpu->cpu": down.Float32s(), "read on the GPU": up.Float32s(), "gpu->cpu->gpu": again.Float32s()} {
					if i, ok := sameBits(got, fs); !ok {
						t.Errorf("float32 %s: element %d has bits %#x, want %#x", name, i, math.Float32bits(got[i]), math.Float32bits(fs[i]))
					}
				}
				if i, ok := sameBits(tr.Float32s(), trWant.Float32s()); !ok {
					t.Errorf("float32 transposed view To(cpu): element %d differs", i)
				}
			case tensor.Int32:
				for name, got := range map[string][]int32{"cpu->gpu->cpu": down.Int32s(), "read on the GPU": up.Int32s(), "gpu->cpu->gpu": again.Int32s()} {
					if !slices.Equal(got, is) {
						t.Errorf("int32 %s: %v, want %v", name, got, is)
					}
				}
				if !slices.Equal(tr.Int32s(), trWant.Int32s()) {
					t.Errorf("int32 transposed view To(cpu): %v, want %v", tr.Int32s(), trWant.Int32s())
				}
			case tensor.Bool:
				for name, got := range map[string][]bool{"cpu->gpu->cpu": down.Bools(), "read on the GPU": up.Bools(), "gpu->cpu->gpu": again.Bools()} {
					if !slices.Equal(got, bs) {
						t.Errorf("bool %s: %v, want %v", name, got, bs)
					}
				}
				if !slices.Equal(tr.Bools(), trWant.Bools()) {
					t.Errorf("bool transposed view To(cpu): %v, want %v", tr.Bools(), trWant.Bools())
				}
			}
		}
	})
}

// TestGPUSubmissionCallbacksSurviveGC records single-dispatch submissions
// (batch cap 1) and runs the garbage collector between them, so that the
// completion callbacks of submitted work fire after a collection. It
// runs in a child process: the failure it guards against kills the
// process (a panic inside a cgo callback, "misuse of an invalid Handle").
//
// The cause found when this test was written: go-webgpu v0.17.1's
// Queue.OnSubmittedWorkDone (and Buffer.MapAsync) pass wgpu-native the
// address of a Go variable holding the callback's cgo.Handle as userdata.
// wgpu-native keeps that pointer until the callback fires, in a later
// Submit or Poll, by which time the garbage collector may have freed and
// reused the variable; device/stream.go registers a work-done callback on
// every submission.
func TestGPUSubmissionCallbacksSurviveGC(t *testing.T) {
	dev := gpuOrSkip(t)
	if !inChild(t) {
		return
	}
	g := gpuRuntime(t, dev)
	g.SetBatchCap(1)
	tensor.Scope(func() {
		x := tensor.Ones([]int{64}, tensor.On(dev))
		for i := range 200 {
			x.AddScalarInPlace(1) // one dispatch, one submission
			runtime.GC()
			if i%50 == 49 {
				if got := x.Sum().Item(); got != 64*float64(i+2) {
					t.Fatalf("after %d steps: sum %v, want %v", i+1, got, 64*(i+2))
				}
			}
		}
	})
}
