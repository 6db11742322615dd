package tensor_test

import (
	"errors"
	"fmt"
	"github.com/tessera-ml/tessera/internal/approx"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tessera-ml/tessera/device"
	"github.com/tessera-ml/tessera/tensor"
)

// GPU runtime hazards at the tensor level (DESIGN.md, "GPU runtime
// (package device) — the hazards are the design"). Package device tests
// each hazard with raw buffers and hand-written kernels; these tests go
// through the tensor API, its dispatch table, the WGSL generators and
// Scope/Release, so that the glue between them is covered too. Each is
// written to fail on a naive design. They change the process-wide GPU's
// batch cap and budget (restored by gpuRuntime), so none runs in
// parallel.

// ok runs f and fails the test with the *tensor.Error f panicked with,
// if any, so that a GPU failure (a rejected dispatch, a discarded batch)
// fails one test instead of the test binary.
func ok(t *testing.T, what string, f func()) bool {
	t.Helper()
	if err := tensor.Catch(f); err != nil {
		t.Errorf("%s: %v", what, err)
		return false
	}
	return true
}

// sameBits reports the first index where a and b differ bit for bit.
func sameBits(a, b []float32) (int, bool) {
	if len(a) != len(b) {
		return -1, false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i, false
		}
	}
	return 0, true
}

func abridge[T any](s []T) string {
	if len(s) <= 16 {
		return fmt.Sprint(s)
	}
	return fmt.Sprintf("%v ... (%d elements)", s[:16], len(s))
}

// hostOf returns t's elements as a host slice of t's dtype.
func hostOf(t *tensor.Tensor) any {
	switch t.DType() {
	case tensor.Int32:
		return t.Int32s()
	case tensor.Bool:
		return t.Bools()
	}
	return t.Float32s()
}

// randFloats returns n reproducible floats in [-2, 2).
func randFloats(seed uint64, n int) []float32 {
	return tensor.Uniform([]int{n}, -2, 2, tensor.WithGenerator(tensor.NewGenerator(seed))).Float32s()
}

// chainResult is what mixedChain returns: named host results.
type chainResult struct {
	names []string
	vals  []any
}

// mixedChain runs about 60 ops of every kernel family on dev: uploads in
// the middle, elementwise and broadcasting ops, matmul (one operand read
// transposed), whole-tensor and per-dim reductions, arg-reductions,
// softmax and log-softmax, cumsum, index ops, cat, where, an in-place
// update, and releases of intermediates while later ops still read
// their storage. Index ops use collision-free indices so that the result
// does not depend on the order of atomic float additions.
func mixedChain(dev tensor.Device) chainResult {
	var r chainResult
	tensor.Scope(func() {
		gen := tensor.NewGenerator(11)
		a := tensor.Randn([]int{33, 47}, tensor.WithGenerator(gen)).To(dev)
		b := tensor.Randn([]int{47, 29}, tensor.WithGenerator(gen)).To(dev)
		c := a.MatMul(b).MulScalar(0.2).Tanh()
		d := c.Mul(c).AddScalar(0.5).Sqrt()
		e := d.Div(c.Abs().AddScalar(1)).Sub(c.Sigmoid())
		c.Release() // still read by recorded work
		d.Release() // read by the recorded Div; no view of d outlives it
		// An upload of d's size: a naive allocator hands it d's block and
		// writes it before the recorded Div reads d.
		d2 := tensor.Randn([]int{33, 29}, tensor.WithGenerator(gen)).To(dev)
		sm := e.Softmax(1)
		ls := e.LogSoftmax(0)
		g := ls.Sub(ls.Amax([]int{1}, true)).Exp().Add(sm)
		colSum := g.Sum(0)
		mean := g.Mean() // a whole-tensor (two-stage) reduction
		vals, ids := g.MaxDim(1, false)
		argMin := g.ArgMin()
		h := g.T().MatMul(a).Clamp(-3, 3) // (29, 47); gᵀ read in place

		perm := make([]int32, 29) // a permutation: no two rows collide
		for i := range perm {
			perm[i] = int32((i*7 + 3) % 29)
		}
		rows := tensor.New(perm).To(dev) // an upload mid-chain
		sel := h.IndexSelect(0, rows)
		cols := make([]int32, 29*5) // distinct columns in every row
		for i := range 29 {
			for j := range 5 {
				cols[i*5+j] = int32((i + 9*j) % 47)
			}
		}
		gi := tensor.New(cols, 29, 5).To(dev)
		gat := sel.Gather(1, gi)
		sc := tensor.Zeros([]int{29, 47}, tensor.On(dev)).ScatterAdd(1, gi, gat)
		ia := tensor.Zeros([]int{29, 47}, tensor.On(dev)).IndexAdd(0, rows, sel)
		sel.Release()
		cat := tensor.Cat([]*tensor.Tensor{sc, ia}, 0)
		cs := cat.CumSum(1).MulScalar(0.05)
		w := tensor.Where(cs.GtScalar(0), cs, cs.MulScalar(0.1))
		w.Slice(0, 0, 58, 2).AddScalarInPlace(1) // in place through a strided view
		p := w.Maximum(cat.Neg()).Minimum(tensor.Full([]int{47}, 2.5, tensor.On(dev)))
		cnt := p.GtScalar(1).LogicalAnd(p.LtScalar(2)).Sum()
		lse := p.LogSumExp([]int{1}, false)
		tot := lse.Sum().Add(mean).Add(colSum.Max()).Add(d2.Sum())
		for _, o := range []struct {
			name string
			t    *tensor.Tensor
		}{
			{"softmax", sm}, {"column sums", colSum}, {"mean", mean}, {"MaxDim values", vals},
			{"MaxDim indices", ids}, {"ArgMin", argMin}, {"cumsum", cs}, {"clamped max/min", p},
			{"mask count", cnt}, {"logsumexp", lse}, {"total", tot},
		} {
			r.names = append(r.names, o.name)
			r.vals = append(r.vals, hostOf(o.t))
		}
	})
	return r
}

// TestGPUBatchCapsGiveIdenticalResults runs mixedChain with batch caps 1,
// 2, 16 and 128 (a submission per command, ..., the whole chain in one
// batch): the results must be bitwise identical, and close to the CPU's.
// A runtime that lets an upload or a free jump ahead of recorded work,
// loses a parameter slot across a submission, or reuses a block still
// read by an unsubmitted command gives different bits at some cap.
func TestGPUBatchCapsGiveIdenticalResults(t *testing.T) {
	dev := gpuOrSkip(t)
	g := gpuRuntime(t, dev)
	cpu := mixedChain(tensor.CPU)
	var ref chainResult
	for _, bc := range []int{1, 2, 16, 128} {
		if err := tensor.Sync(dev); err != nil {
			t.Fatal(err)
		}
		g.SetBatchCap(bc)
		subs, disp := g.SubmitCount(), g.DispatchCount()
		var got chainResult
		if !ok(t, fmt.Sprintf("the chain at cap %d", bc), func() { got = mixedChain(dev) }) {
			continue
		}
		subs, disp = g.SubmitCount()-subs, g.DispatchCount()-disp
		t.Logf("cap %3d: %d dispatches in %d submissions", bc, disp, subs)
		if bc == 1 && subs < disp {
			t.Errorf("cap 1: %d submissions for %d dispatches", subs, disp)
		}
		if ref.vals == nil {
			ref = got
			for i, name := range got.names {
				approx.CheckAny(t, fmt.Sprintf("cap %d, %s against the CPU", bc, name), got.vals[i], cpu.vals[i], approx.Rel1(2e-4))
			}
			continue
		}
		for i, name := range got.names {
			switch v := got.vals[i].(type) {
			case []float32:
				if j, ok := sameBits(v, ref.vals[i].([]float32)); !ok {
					t.Errorf("cap %d, %s: element %d is %v, %v at cap 1 (bitwise)", bc, name, j, v[max(j, 0)], ref.vals[i].([]float32)[max(j, 0)])
				}
			default:
				approx.CheckAny(t, fmt.Sprintf("cap %d, %s against cap 1", bc, name), v, ref.vals[i], approx.Rel1(0))
			}
		}
	}
}

// TestGPUReadbackMidBatch reads tensors while later ops are still
// recorded in the open batch, then keeps recording on the same tensors:
// the read must submit everything recorded before it and return it, and
// recording must go on correctly afterwards. A read that maps without
// submitting returns stale memory; one that submits but leaves the
// encoder unusable breaks the ops after it.
func TestGPUReadbackMidBatch(t *testing.T) {
	dev := gpuOrSkip(t)
	g := gpuRuntime(t, dev)
	if err := tensor.Sync(dev); err != nil {
		t.Fatal(err)
	}
	g.SetBatchCap(1 << 20)
	const n = 1000
	host := randFloats(21, n)
	want := func(f func(v float32) float32) []float32 {
		out := make([]float32, n)
		for i, v := range host {
			out[i] = f(v)
		}
		return out
	}
	ok(t, "reading mid-batch", func() {
		tensor.Scope(func() {
			x := tensor.New(host).To(dev)
			subs := g.SubmitCount()
			y1 := x.MulScalar(2)
			y2 := y1.AddScalar(1)
			y3 := y2.Mul(y1)
			if g.SubmitCount() != subs {
				t.Fatalf("recording three ops at cap %d submitted", 1<<20)
			}
			// y1 while y2 and y3, recorded after it, are still unsubmitted.
			approx.CheckAny(t, "y1 read mid-batch", y1.Float32s(), want(func(v float32) float32 { return 2 * v }), approx.Rel1(0))
			// Keep going: modify y1 in place, use it and y3 again.
			y1.AddScalarInPlace(5)
			y4 := y1.Add(y3)
			s := y4.Sum()
			// A non-contiguous view read (a copy kernel, then the read) while
			// s is recorded and unread.
			v := y4.Reshape(20, 50).T()
			vt := v.Float32s()
			w4 := want(func(v float32) float32 { return (2*v + 5) + (2*v+1)*(2*v) })
			for i := range 50 {
				for j := range 20 {
					if got, w := vt[i*20+j], w4[j*50+i]; got != w {
						t.Fatalf("transposed view read mid-batch: [%d][%d] = %v, want %v", i, j, got, w)
					}
				}
			}
			approx.CheckAny(t, "y2 after later reads", y2.Float32s(), want(func(v float32) float32 { return 2*v + 1 }), approx.Rel1(0))
			approx.CheckAny(t, "y1 after the in-place update", y1.Float32s(), want(func(v float32) float32 { return 2*v + 5 }), approx.Rel1(0))
			var ws float64
			for _, v := range w4 {
				ws += float64(v)
			}
			if got := s.Item(); math.Abs(got-ws) > 1e-3*(1+math.Abs(ws)) {
				t.Errorf("sum recorded before a mid-batch read = %v, want %v", got, ws)
			}
			// Many reads interleaved with recording, one element at a time.
			acc := tensor.Zeros([]int{n}, tensor.On(dev))
			for k := range 20 {
				acc.AddInPlace(x, 1)
				if got := acc.Select(0, 7*k).Item(); math.Abs(got-float64(float32(k+1)*host[7*k])) > 1e-4*float64(k+1) {
					t.Fatalf("interleaved read %d: %v, want %v", k, got, float32(k+1)*host[7*k])
				}
			}
		})
	})
}

// TestGPUUploadIntoReusedBlock computes y = f(x) (recorded, not
// submitted), releases x and uploads a new tensor of x's size from host
// data: a naive caching allocator hands it x's block and queue.WriteBuffer
// runs before the recorded f, which then reads the new data. y must be
// f(old x). The second half drops x without Release and lets the garbage
// collector's cleanup free it while f is still unsubmitted.
func TestGPUUploadIntoReusedBlock(t *testing.T) {
	dev := gpuOrSkip(t)
	g := gpuRuntime(t, dev)
	const n = 4096
	oldX, newX := randFloats(31, n), randFloats(32, n)
	want := make([]float32, n)
	for i, v := range oldX {
		want[i] = 3*v + 1
	}
	for _, how := range []string{"Release", "Scope", "garbage collector"} {
		t.Run(how, func(t *testing.T) {
			if err := tensor.Sync(dev); err != nil {
				t.Fatal(err)
			}
			g.SetBatchCap(1 << 20)
			var y, x2 *tensor.Tensor
			ok(t, how, func() {
				switch how {
				case "Release":
					x := tensor.New(oldX).To(dev) // the block is idle: a direct queue write
					y = x.MulScalar(3).AddScalar(1)
					x.Release()
				case "Scope":
					y = tensor.ScopeResult(func() *tensor.Tensor {
						return tensor.New(oldX).To(dev).MulScalar(3).AddScalar(1)
					})
				case "garbage collector":
					live := settle(t)
					func() {
						x := tensor.New(oldX).To(dev)
						y = x.MulScalar(3).AddScalar(1)
					}()
					// The host tensor, x and MulScalar's output are garbage; y stays.
					if got := waitLive(live + 1); got > live+1 {
						t.Fatalf("the cleanups did not free x: %d storages live, want at most %d", got, live+1)
					}
				}
				subs := g.SubmitCount()
				for i := range 4 { // more than one: LIFO free lists hand back the newest block first
					u := tensor.New(newX).To(dev)
					if i < 3 {
						u.Release()
					} else {
						x2 = u
					}
				}
				if g.SubmitCount() != subs {
					t.Fatalf("the uploads submitted the batch; the test needs them inside it")
				}
				approx.CheckAny(t, "y = 3x+1 of the old x", y.Float32s(), want, approx.Rel1(0))
				approx.CheckAny(t, "the new upload", x2.Float32s(), newX, approx.Rel1(0))
				y.Release()
				x2.Release()
			})
		})
	}
}

// TestGPUInPlaceAliasing runs in-place ops whose operand is the target
// itself, so one buffer is bound twice (or three times) in one dispatch,
// and in-place ops between overlapping views, on the GPU and the CPU. A
// runtime that binds the buffer read-only and read_write in one dispatch
// fails wgpu's usage validation; a kernel that reads through a second
// binding after another invocation wrote gives wrong values.
func TestGPUInPlaceAliasing(t *testing.T) {
	dev := gpuOrSkip(t)
	cases := []struct {
		name string
		n    []int
		f    func(x *tensor.Tensor)
	}{
		{"AddInPlace(x) vec4", []int{1024}, func(x *tensor.Tensor) { x.AddInPlace(x, 1) }},
		{"AddInPlace(x) odd", []int{1001}, func(x *tensor.Tensor) { x.AddInPlace(x, 1) }},
		{"AddInPlace(x, 2.5)", []int{1001}, func(x *tensor.Tensor) { x.AddInPlace(x, 2.5) }},
		{"MulInPlace(x)", []int{1001}, func(x *tensor.Tensor) { x.MulInPlace(x) }},
		{"MulInPlace(x) vec4", []int{64, 16}, func(x *tensor.Tensor) { x.MulInPlace(x) }},
		{"SubInPlace(x)", []int{333}, func(x *tensor.Tensor) { x.SubInPlace(x) }},
		{"DivInPlace(x)", []int{333}, func(x *tensor.Tensor) { x.AddScalarInPlace(5).DivInPlace(x) }},
		{"AddcmulInPlace(x, x)", []int{257}, func(x *tensor.Tensor) { x.AddcmulInPlace(x, x, 0.5) }},
		{"AddcdivInPlace(x, x)", []int{257}, func(x *tensor.Tensor) { x.AddScalarInPlace(3).AddcdivInPlace(x, x, 0.5) }},
		{"transposed view AddInPlace itself", []int{37, 53}, func(x *tensor.Tensor) { v := x.T(); v.AddInPlace(v, 1) }},
		{"column view MulInPlace itself", []int{37, 53}, func(x *tensor.Tensor) { v := x.Select(1, 4); v.MulInPlace(v) }},
		{"shifted overlapping views", []int{1000}, func(x *tensor.Tensor) {
			x.Slice(0, 1, 1000, 1).AddInPlace(x.Slice(0, 0, 999, 1), 1)
		}},
		{"row broadcast from its own storage", []int{16, 24}, func(x *tensor.Tensor) { x.AddInPlace(x.Select(0, 3), 1) }},
		{"chain on one buffer", []int{1001}, func(x *tensor.Tensor) {
			for range 5 {
				x.MulInPlace(x).MulScalarInPlace(0.5).AddInPlace(x, 1)
			}
		}},
		{"CopyFrom itself transposed", []int{32, 32}, func(x *tensor.Tensor) { x.CopyFrom(x.T()) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got, want []float32
			for _, d := range []tensor.Device{tensor.CPU, dev} {
				n := 1
				for _, s := range c.n {
					n *= s
				}
				var res []float32
				if !ok(t, d.String(), func() {
					tensor.NoGrad(func() {
						tensor.Scope(func() {
							x := tensor.New(randFloats(41, n), c.n...).To(d)
							c.f(x)
							res = x.Float32s()
						})
					})
				}) {
					return
				}
				if d == tensor.CPU {
					want = res
				} else {
					got = res
				}
			}
			approx.CheckAny(t, c.name, got, want, approx.Rel1(1e-6))
		})
	}
	t.Run("int32 MulInPlace(x)", func(t *testing.T) {
		ok(t, "int32", func() {
			v := []int32{-3, -2, -1, 0, 1, 2, 3, 46340, -46340}
			x := tensor.New(v).To(dev)
			x.MulInPlace(x).AddInPlace(x, 1)
			want := make([]int32, len(v))
			for i, e := range v {
				want[i] = 2 * e * e
			}
			approx.CheckAny(t, "int32 x*x then x+x", x.Int32s(), want, approx.Rel1(0))
		})
	})
}

// TestGPULargeOneDimensional runs elementwise ops over 17M float32
// elements (68 MiB), more than 65535 workgroups of 256 invocations: the
// grid must fold into two dimensions. Without folding the dispatch is
// rejected or the elements past 65535×256 are never written; a fold that
// computes the linear index wrongly corrupts the middle. Every element is
// checked, the start, the fold boundary and the end included. Three
// shapes: the contiguous kernel (odd length, so not the vec4 path), the
// strided kernel (a transposed view), and the vec4 kernel.
func TestGPULargeOneDimensional(t *testing.T) {
	dev := gpuOrSkip(t)
	g := gpuRuntime(t, dev)
	g.SetBatchCap(0)
	const n = 17_000_004 // 4 · 4_250_001
	maxD := g.Caps().MaxWorkgroupsPerDimension
	if n/256 <= maxD {
		t.Logf("this adapter allows %d workgroups per dimension: %d elements do not need a folded grid", maxD, n)
	}
	host := make([]float32, n)
	for i := range host {
		host[i] = float32(i%8191) - 4096
	}
	start := time.Now()
	check := func(what string, got []float32, want func(i int) float32) {
		t.Helper()
		bad, first := 0, -1
		for i, v := range got {
			if v != want(i) {
				if first < 0 {
					first = i
				}
				bad++
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d elements wrong, the first at %d (%v, want %v)", what, bad, len(got), first, got[first], want(first))
		}
		for _, i := range []int{0, len(got) / 2, 65535*256 - 1, 65535 * 256, len(got) - 1} {
			if i < len(got) && got[i] != want(i) {
				t.Errorf("%s: element %d is %v, want %v", what, i, got[i], want(i))
			}
		}
	}
	ok(t, "17M elements", func() {
		tensor.Scope(func() {
			x := tensor.New(host).To(dev)
			// Contiguous, odd length from an offset of 1: the scalar kernel
			// with 17M invocations.
			odd := x.Slice(0, 1, n, 1)
			y := odd.AddScalar(0.5)
			if y.Numel() != n-1 {
				t.Fatalf("slice of %d elements", y.Numel())
			}
			check("AddScalar over 17M contiguous (odd length)", y.Float32s(), func(i int) float32 { return host[i+1] + 0.5 })
			y.Release()
			// Strided: the transpose of a (4, n/4) view, 17M invocations.
			tr := x.View(4, n/4).T().MulScalar(2)
			check("MulScalar over a 17M-element transposed view", tr.Float32s(), func(i int) float32 {
				r, c := i/4, i%4 // tr is (n/4, 4)
				return 2 * host[c*(n/4)+r]
			})
			tr.Release()
			// vec4: 4.25M invocations of 4 elements.
			v := x.AddScalar(-1)
			check("AddScalar over 17M contiguous (vec4)", v.Float32s(), func(i int) float32 { return host[i] - 1 })
		})
	})
	t.Logf("three ops over %d elements with upload and readback in %v", n, time.Since(start).Round(time.Millisecond))
}

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
	dev := gpuOrSkip(t)
	g := gpuRuntime(t, dev)
	if err := tensor.Sync(dev); err != nil {
		t.Fatal(err)
	}
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
