package tensor_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/tessera-ml/tessera/internal/approx"
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
	eagerOnly(t)
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
