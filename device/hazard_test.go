//go:build cgo

package device

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// A recorded dispatch reads x; x is freed and a same-size buffer allocated
// and uploaded before the batch is submitted. The allocator hands out x's
// block again inside the batch (intra-batch reuse); an upload through
// queue.WriteBuffer would land before the dispatch, which would then read
// the new data. The result must be the old computation.
func TestUploadIntoReusedBlockWhileRecordedWorkReads(t *testing.T) {
	g := openTestGPU(t)
	const n = 64
	x := mustAlloc(t, g, n*4)
	mustWrite(t, g, x, fillU32(n, func(int) uint32 { return 3 }))
	if err := g.Sync(); err != nil {
		t.Fatal(err)
	}
	y := mustAlloc(t, g, n*4)
	mustRun(t, g, double(x, y)) // recorded, not submitted
	g.Free(x)
	z := mustAlloc(t, g, n*4) // x's block, reused within the open batch
	if z.blk != x.blk {
		t.Fatalf("the block freed in the open batch was not reused within it")
	}
	mustWrite(t, g, z, fillU32(n, func(int) uint32 { return 100 }))
	w := mustAlloc(t, g, n*4)
	mustRun(t, g, double(z, w))
	checkU32(t, "old computation", readU32(t, g, y), fillU32(n, func(int) uint32 { return 6 }))
	checkU32(t, "new computation", readU32(t, g, w), fillU32(n, func(int) uint32 { return 200 }))

	// Overwrite the very buffer that recorded work reads: the upload must
	// be ordered after that work (staging copy inside the encoder).
	v := mustAlloc(t, g, n*4)
	mustRun(t, g, double(w, v))
	mustWrite(t, g, w, fillU32(n, func(int) uint32 { return 7 }))
	u := mustAlloc(t, g, n*4)
	mustRun(t, g, double(w, u))
	checkU32(t, "read before overwrite", readU32(t, g, v), fillU32(n, func(int) uint32 { return 400 }))
	checkU32(t, "read after overwrite", readU32(t, g, u), fillU32(n, func(int) uint32 { return 14 }))

	// After the batch is submitted the freed block is reused (cache hit),
	// and the fast upload path is then safe.
	mustRun(t, g, double(u, v))
	g.Free(u)
	if err := g.Flush(); err != nil {
		t.Fatal(err)
	}
	hits := g.Stats().CacheHits
	r := mustAlloc(t, g, n*4)
	if g.Stats().CacheHits != hits+1 {
		t.Errorf("allocation after flush was not served from the cache")
	}
	mustWrite(t, g, r, fillU32(n, func(int) uint32 { return 1 }))
	checkU32(t, "reused after flush", readU32(t, g, v), fillU32(n, func(int) uint32 { return 28 }))
	checkU32(t, "upload into reused block", readU32(t, g, r), fillU32(n, func(int) uint32 { return 1 }))
}

// Every way of writing a block that was freed and handed out again inside
// the open batch is ordered after the recorded work that still reads the
// block's old contents: a kernel output (wgpu puts a barrier between the
// read-only and the read_write use), Fill (a clear in the encoder), Copy,
// and Write (a staged copy, never queue.WriteBuffer, which would run before
// the whole batch).
func TestReuseWithinBatchHazards(t *testing.T) {
	g := openTestGPU(t)
	g.SetBatchCap(1000)
	const n = 256
	src := mustAlloc(t, g, n*4)
	mustWrite(t, g, src, fillU32(n, func(i int) uint32 { return uint32(i) }))
	if err := g.Sync(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		write func(t *testing.T, z *Buffer)
		want  func(i int) uint32
	}{
		{"kernel output", func(t *testing.T, z *Buffer) {
			mustRun(t, g, Kernel{Source: wgslAxpb, Bindings: []Binding{{Buf: src, ReadOnly: true}, {Buf: z}}, Params: axpbParams(5, 3, n), Groups: groupsFor(n)})
		}, func(i int) uint32 { return 5*uint32(i) + 3 }},
		{"fill", func(t *testing.T, z *Buffer) {
			if err := g.Fill(z, 0, n*4); err != nil {
				t.Fatal(err)
			}
		}, func(int) uint32 { return 0 }},
		{"copy", func(t *testing.T, z *Buffer) {
			if err := g.Copy(z, 0, src, 0, n*4); err != nil {
				t.Fatal(err)
			}
		}, func(i int) uint32 { return uint32(i) }},
		{"write", func(t *testing.T, z *Buffer) {
			mustWrite(t, g, z, fillU32(n, func(int) uint32 { return 7 }))
		}, func(int) uint32 { return 7 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			submits := g.SubmitCount()
			x := mustAlloc(t, g, n*4)
			mustRun(t, g, double(src, x)) // x = 2i, recorded
			y := mustAlloc(t, g, n*4)
			mustRun(t, g, double(x, y)) // y = 4i, recorded: reads x
			g.Free(x)
			z := mustAlloc(t, g, n*4)
			if z.blk != x.blk {
				t.Fatalf("the block freed in the open batch was not reused within it")
			}
			c.write(t, z)
			w := mustAlloc(t, g, n*4)
			mustRun(t, g, double(z, w))
			if g.SubmitCount() != submits {
				t.Fatalf("the batch was submitted before the checks")
			}
			checkU32(t, "work recorded before the reuse", readU32(t, g, y), fillU32(n, func(i int) uint32 { return 4 * uint32(i) }))
			checkU32(t, "reused block", readU32(t, g, z), fillU32(n, c.want))
			checkU32(t, "work recorded after the reuse", readU32(t, g, w), fillU32(n, func(i int) uint32 { return 2 * c.want(i) }))
			g.Free(y)
			g.Free(z)
			g.Free(w)
		})
	}
}

// The chain y = f(x); Free(x) at the default batch cap reuses the freed
// block within the batch: reserved memory stays near what is allocated
// instead of growing to batch cap x tensor size (65 MiB for 2 MiB in use
// with 1 MiB buffers when freed blocks waited for the flush).
func TestChainReuseWithinBatch(t *testing.T) {
	g := openTestGPU(t)
	const n, steps = 1 << 18, 100 // 1 MiB of u32
	x := mustAlloc(t, g, n*4)
	mustWrite(t, g, x, fillU32(n, func(i int) uint32 { return uint32(i) }))
	if err := g.Sync(); err != nil {
		t.Fatal(err)
	}
	g.ResetPeak()
	s0 := g.Stats()
	submits := g.SubmitCount()
	for range steps {
		y := mustAlloc(t, g, n*4)
		mustRun(t, g, Kernel{Source: wgslAxpb, Bindings: []Binding{{Buf: x, ReadOnly: true}, {Buf: y}}, Params: axpbParams(1, 1, n), Groups: groupsFor(n)})
		g.Free(x)
		x = y
	}
	s := g.Stats()
	checkU32(t, "chain", readU32(t, g, x), fillU32(n, func(i int) uint32 { return uint32(i) + steps }))
	g.Free(x)
	t.Logf("%d ops in %d submissions: peak allocated %s, peak reserved %s, %d misses, %d hits",
		steps, g.SubmitCount()-submits, FormatBytes(s.PeakAllocated), FormatBytes(s.PeakReserved), s.CacheMisses-s0.CacheMisses, s.CacheHits-s0.CacheHits)
	if s.PeakAllocated != 2*n*4 || s.PeakReserved > 3*s.PeakAllocated {
		t.Errorf("peak reserved %s for peak allocated %s", FormatBytes(s.PeakReserved), FormatBytes(s.PeakAllocated))
	}
	if m := s.CacheMisses - s0.CacheMisses; m > 2 {
		t.Errorf("%d cache misses for a chain of %d ops", m, steps)
	}
}

// Buffers freed inside an open batch while recorded work reads them, then
// Alloc/Write/Run in the same batch (the blocks are reused within it).
func TestFreeInsideOpenBatch(t *testing.T) {
	g := openTestGPU(t)
	g.SetBatchCap(1000)
	const n = 100
	a := mustAlloc(t, g, n*4)
	mustWrite(t, g, a, fillU32(n, func(i int) uint32 { return uint32(i) }))
	b := mustAlloc(t, g, n*4)
	mustRun(t, g, double(a, b)) // b = 2i
	g.Free(a)
	c := mustAlloc(t, g, n*4)
	mustWrite(t, g, c, fillU32(n, func(i int) uint32 { return 1000 }))
	d := mustAlloc(t, g, n*4)
	mustRun(t, g, Kernel{Source: wgslAdd, Bindings: []Binding{{Buf: b, ReadOnly: true}, {Buf: c, ReadOnly: true}, {Buf: d}}, Groups: groupsFor(n)})
	g.Free(b)
	g.Free(c)
	e := mustAlloc(t, g, n*4)
	mustRun(t, g, double(d, e))
	g.Free(d)
	if s := g.Stats(); s.Pending == 0 || s.CacheMisses != 3 {
		t.Errorf("blocks freed in the open batch should be reused (3 misses) and, cached, pending: %+v", s)
	}
	checkU32(t, "chain", readU32(t, g, e), fillU32(n, func(i int) uint32 { return 2 * (2*uint32(i) + 1000) }))
	if s := g.Stats(); s.Pending != 0 {
		t.Errorf("pending blocks not cached after the flush: %d bytes", s.Pending)
	}
}

// A chain of ~200 tiny dispatches with per-dispatch Params, freeing and
// allocating at every step, gives identical results for any batch cap.
func TestBatchCaps(t *testing.T) {
	g := openTestGPU(t)
	const n, steps = 64, 200
	want := fillU32(n, func(i int) uint32 { return uint32(i) })
	for s := 0; s < steps; s++ {
		a, b := uint32(s%5+1), uint32(s*7)
		for i := range want {
			want[i] = want[i]*a + b
		}
	}
	for _, bc := range []int{1, 2, 16, 128} {
		t.Run(fmt.Sprint("cap", bc), func(t *testing.T) {
			g.SetBatchCap(bc)
			submits := g.SubmitCount()
			cur := mustAlloc(t, g, n*4)
			mustWrite(t, g, cur, fillU32(n, func(i int) uint32 { return uint32(i) }))
			for s := 0; s < steps; s++ {
				next := mustAlloc(t, g, n*4)
				mustRun(t, g, Kernel{
					Source:   wgslAxpb,
					Bindings: []Binding{{Buf: cur, ReadOnly: true}, {Buf: next}},
					Params:   axpbParams(uint32(s%5+1), uint32(s*7), n),
					Groups:   groupsFor(n),
				})
				g.Free(cur)
				cur = next
			}
			checkU32(t, "chain", readU32(t, g, cur), want)
			g.Free(cur)
			got := g.SubmitCount() - submits
			if lo := int64(steps / bc); got < lo {
				t.Errorf("%d submissions for %d commands at cap %d", got, steps+1, bc)
			}
		})
	}
}

// More parameter bytes than one batch's arena holds: the batch is submitted
// early and the results stay right.
func TestParamsArenaOverflow(t *testing.T) {
	g := openTestGPU(t)
	g.SetBatchCap(1000)
	src := `
struct P { v: array<vec4<u32>, 64> }
@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@group(1) @binding(0) var<uniform> p: P;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
	let i = id.x;
	if (i < arrayLength(&x)) { x[i] = x[i] + p.v[63].x; }
}`
	const n, steps = 64, 100
	x := mustAlloc(t, g, n*4)
	mustWrite(t, g, x, make([]uint32, n))
	submits := g.SubmitCount()
	var sum uint32
	for s := 0; s < steps; s++ {
		params := make([]uint32, 256)
		params[252] = uint32(s + 1)
		sum += uint32(s + 1)
		mustRun(t, g, Kernel{Source: src, Bindings: []Binding{{Buf: x}}, Params: u32bytes(params), Groups: groupsFor(n)})
	}
	if g.SubmitCount() == submits {
		t.Errorf("100 dispatches with 1 KiB of params each did not overflow the arena")
	}
	checkU32(t, "sum", readU32(t, g, x), fillU32(n, func(int) uint32 { return sum }))
}

// Read in the middle of a batch submits what was recorded and returns it;
// recording continues afterwards.
func TestReadMidBatch(t *testing.T) {
	g := openTestGPU(t)
	g.SetBatchCap(1000)
	const n = 64
	x := mustAlloc(t, g, n*4)
	mustWrite(t, g, x, fillU32(n, func(i int) uint32 { return uint32(i) }))
	y1, y2, y3 := mustAlloc(t, g, n*4), mustAlloc(t, g, n*4), mustAlloc(t, g, n*4)
	mustRun(t, g, double(x, y1))
	submits := g.SubmitCount()
	checkU32(t, "y1", readU32(t, g, y1), fillU32(n, func(i int) uint32 { return 2 * uint32(i) }))
	if g.SubmitCount() != submits+1 {
		t.Errorf("Read did not submit the open batch")
	}
	mustRun(t, g, double(y1, y2))
	mustRun(t, g, double(y2, y3))
	part, err := g.Read(y2, 8, 8)
	if err != nil {
		t.Fatal(err)
	}
	checkU32(t, "y2[2:4]", bytesU32(part), []uint32{8, 12})
	checkU32(t, "y3", readU32(t, g, y3), fillU32(n, func(i int) uint32 { return 8 * uint32(i) }))
}

// In-place kernels: one read_write binding, and one buffer bound twice
// (read-only and read_write) in one dispatch.
func TestInPlace(t *testing.T) {
	g := openTestGPU(t)
	const n = 80
	x := mustAlloc(t, g, n*4)
	mustWrite(t, g, x, fillU32(n, func(i int) uint32 { return uint32(i) }))
	for range 3 {
		mustRun(t, g, Kernel{Source: wgslInplace, Bindings: []Binding{{Buf: x}}, Groups: groupsFor(n)})
	}
	checkU32(t, "x*2+1 thrice", readU32(t, g, x), fillU32(n, func(i int) uint32 { return 8*uint32(i) + 7 }))

	// Aliased: wgpu tracks usage per buffer, so a read-only and a
	// read_write binding of one buffer conflict unless both layout entries
	// are read_write; Run upgrades them.
	mustRun(t, g, double(x, x))
	checkU32(t, "aliased double", readU32(t, g, x), fillU32(n, func(i int) uint32 { return 16*uint32(i) + 14 }))
	// x + x into x, three bindings of one buffer.
	mustRun(t, g, Kernel{Source: wgslAdd, Bindings: []Binding{{Buf: x, ReadOnly: true}, {Buf: x, ReadOnly: true}, {Buf: x}}, Groups: groupsFor(n)})
	checkU32(t, "aliased add", readU32(t, g, x), fillU32(n, func(i int) uint32 { return 32*uint32(i) + 28 }))
}

func TestGroupsAboveLimit(t *testing.T) {
	g := openTestGPU(t)
	x := mustAlloc(t, g, 256)
	mustWrite(t, g, x, fillU32(64, func(i int) uint32 { return uint32(i) }))
	lim := uint32(g.Caps().MaxWorkgroupsPerDimension)
	for d := range 3 {
		k := Kernel{Source: wgslInplace, Bindings: []Binding{{Buf: x}}, Groups: [3]uint32{1, 1, 1}}
		k.Groups[d] = lim + 1
		err := g.Run(k)
		if err == nil || !strings.Contains(err.Error(), "maxComputeWorkgroupsPerDimension") {
			t.Fatalf("Groups[%d] = %d: err = %v", d, lim+1, err)
		}
	}
	// The batch is not poisoned.
	mustRun(t, g, Kernel{Source: wgslInplace, Bindings: []Binding{{Buf: x}}, Groups: [3]uint32{1, 1, 1}})
	checkU32(t, "after rejected dispatch", readU32(t, g, x), fillU32(64, func(i int) uint32 { return 2*uint32(i) + 1 }))
}

func TestBindingTooLarge(t *testing.T) {
	g := openTestGPU(t)
	limit := g.Caps().MaxStorageBindingSize
	out := mustAlloc(t, g, 256)
	var big *Buffer
	if limit+(1<<20) <= min(g.Caps().MaxBufferSize, 256<<20) {
		big = mustAlloc(t, g, limit+(1<<20)) // 129 MiB on lavapipe
		defer g.Free(big)
	} else {
		// A large-binding GPU: a handle whose size we never allocated
		// (validation rejects it before wgpu sees it).
		big = &Buffer{gpu: g, blk: &block{size: classSize(limit + 1<<20)}, size: limit + 1<<20}
	}
	err := g.Run(double(big, out))
	var bt *BindingTooLargeError
	if !errors.Is(err, ErrBindingTooLarge) || !errors.As(err, &bt) || bt.Limit != limit || bt.Size <= limit || bt.Binding != 0 {
		t.Fatalf("binding %d bytes over a %d limit: err = %v", big.Size(), limit, err)
	}
	if !strings.Contains(err.Error(), fmt.Sprint(limit)) {
		t.Errorf("error does not name the limit: %v", err)
	}
	if big.blk.raw == nil {
		return
	}
	// Binding a range of it works.
	off := limit - 1024 // a multiple of the offset alignment
	if err := g.Write(big, off, u32bytes(fillU32(64, func(i int) uint32 { return uint32(i) }))); err != nil {
		t.Fatal(err)
	}
	mustRun(t, g, Kernel{Source: wgslDouble, Bindings: []Binding{{Buf: big, Offset: off, Size: 256, ReadOnly: true}, {Buf: out}}, Groups: [3]uint32{1, 1, 1}})
	checkU32(t, "range of a large buffer", readU32(t, g, out), fillU32(64, func(i int) uint32 { return 2 * uint32(i) }))
}

func TestBindingValidation(t *testing.T) {
	g := openTestGPU(t)
	x := mustAlloc(t, g, 1024)
	y := mustAlloc(t, g, 1024)
	if err := g.Run(Kernel{Source: wgslDouble, Bindings: []Binding{{Buf: x, Offset: 4, ReadOnly: true}, {Buf: y}}, Groups: [3]uint32{1, 1, 1}}); err == nil || !strings.Contains(err.Error(), "minStorageBufferOffsetAlignment") {
		t.Errorf("misaligned offset: err = %v", err)
	}
	if err := g.Run(Kernel{Source: wgslDouble, Bindings: []Binding{{Buf: x, Offset: 512, Size: 1024, ReadOnly: true}, {Buf: y}}, Groups: [3]uint32{1, 1, 1}}); err == nil {
		t.Errorf("range past the end accepted")
	}
	g.Free(x)
	if err := g.Run(double(x, y)); err == nil || !strings.Contains(err.Error(), "freed") {
		t.Errorf("freed buffer: err = %v", err)
	}
	if err := g.Run(Kernel{Source: wgslDouble, Bindings: []Binding{{Buf: nil}, {Buf: y}}, Groups: [3]uint32{1, 1, 1}}); err == nil {
		t.Errorf("nil buffer accepted")
	}
}

func TestShaderCompileError(t *testing.T) {
	g := openTestGPU(t)
	x := mustAlloc(t, g, 256)
	err := g.Run(Kernel{Source: "this is not WGSL {", Bindings: []Binding{{Buf: x}}, Groups: [3]uint32{1, 1, 1}})
	if err == nil || !strings.Contains(err.Error(), "WGSL") {
		t.Fatalf("bad WGSL: err = %v", err)
	}
	t.Logf("compile error: %v", err)
	// Type error, missing entry point, and a layout mismatch (the shader
	// writes a binding declared read-only).
	bad := map[string]Kernel{
		"type error":         {Source: strings.Replace(wgslInplace, "2u", "2.0", 1), Bindings: []Binding{{Buf: x}}},
		"no entry":           {Source: wgslInplace, Entry: "nope", Bindings: []Binding{{Buf: x}}},
		"read_write as read": {Source: wgslInplace, Bindings: []Binding{{Buf: x, ReadOnly: true}}},
	}
	for name, k := range bad {
		k.Groups = [3]uint32{1, 1, 1}
		if err := g.Run(k); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	mustWrite(t, g, x, make([]uint32, 64))
	mustRun(t, g, Kernel{Source: wgslInplace, Bindings: []Binding{{Buf: x}}, Groups: [3]uint32{1, 1, 1}})
	checkU32(t, "after compile errors", readU32(t, g, x), fillU32(64, func(int) uint32 { return 1 }))
}
