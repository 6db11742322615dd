//go:build cgo

package device

import (
	"errors"
	"strings"
	"sync"
	"testing"
)

// A budget smaller than the working set gives the typed out-of-memory error
// after the reclaim hook ran; the process keeps running and allocations
// work again after frees.
func TestBudgetOOM(t *testing.T) {
	g := openTestGPU(t, func(o *Options) { o.Budget = 1 << 20 })
	calls := 0
	g.SetReclaim(func() { calls++ })
	a := mustAlloc(t, g, 512<<10)
	b := mustAlloc(t, g, 512<<10)
	_, err := g.Alloc(256 << 10)
	var oom *OOMError
	if !errors.Is(err, ErrOutOfMemory) || !errors.As(err, &oom) {
		t.Fatalf("over budget: err = %v", err)
	}
	if oom.Requested != 256<<10 || oom.Budget != 1<<20 || oom.Reserved != 1<<20 || oom.Allocated != 1<<20 {
		t.Errorf("OOMError fields: %+v", *oom)
	}
	if !strings.Contains(err.Error(), "TESSERA_GPU_BUDGET") {
		t.Errorf("error does not name TESSERA_GPU_BUDGET: %v", err)
	}
	if calls != 1 {
		t.Errorf("reclaim hook ran %d times, want 1", calls)
	}
	g.Free(a)
	c := mustAlloc(t, g, 256<<10) // a's cached block (within 2x) serves it
	mustWrite(t, g, c, fillU32(64, func(i int) uint32 { return uint32(i) }))
	mustRun(t, g, Kernel{Source: wgslInplace, Bindings: []Binding{{Buf: c, Size: 256}}, Groups: [3]uint32{1, 1, 1}})
	g.Free(b)
	g.Free(c)
	d := mustAlloc(t, g, 1<<20) // needs the cached blocks released first
	if _, err := g.Alloc(2 << 20); !errors.Is(err, ErrOutOfMemory) {
		t.Errorf("allocation above the budget: err = %v", err)
	}
	g.Free(d)
	if s := g.Stats(); s.Reserved > s.Budget {
		t.Errorf("reserved %d above budget %d", s.Reserved, s.Budget)
	}
}

// The reclaim hook frees memory (as the tensor layer's cleanups would) and
// the retried allocation succeeds.
func TestReclaimHook(t *testing.T) {
	g := openTestGPU(t, func(o *Options) { o.Budget = 1 << 20 })
	held := mustAlloc(t, g, 1<<20)
	mustWrite(t, g, held, make([]uint32, 64))
	mustRun(t, g, Kernel{Source: wgslInplace, Bindings: []Binding{{Buf: held}}, Groups: [3]uint32{1, 1, 1}}) // open batch references it
	g.SetReclaim(func() { g.Free(held) })                                                                    // runs without the lock
	b, err := g.Alloc(512 << 10)
	if err != nil {
		t.Fatalf("Alloc after reclaim: %v", err)
	}
	g.Free(b)
}

// The trim path runs while a batch is open: a block freed in the open batch
// must not be released before the batch is submitted and finished (wgpu
// aborts on a Destroy of a buffer that unsubmitted work uses). A request of
// its class reuses it; one of a larger class needs its bytes, so Alloc
// takes the slow path (submit, wait, empty the cache) instead.
func TestTrimWhileBatchOpen(t *testing.T) {
	g := openTestGPU(t, func(o *Options) { o.Budget = 2 << 20 })
	g.SetBatchCap(1000)
	x := mustAlloc(t, g, 1<<20)
	mustWrite(t, g, x, make([]uint32, 64))
	y := mustAlloc(t, g, 256)
	mustRun(t, g, Kernel{Source: wgslDouble, Bindings: []Binding{{Buf: x, Size: 256, ReadOnly: true}, {Buf: y}}, Groups: [3]uint32{1, 1, 1}})
	g.Free(x) // cached, but the open batch reads it
	z := mustAlloc(t, g, 1<<20)
	if z.blk != x.blk {
		t.Fatalf("same-class request did not reuse the block within the batch")
	}
	mustRun(t, g, Kernel{Source: wgslDouble, Bindings: []Binding{{Buf: y, ReadOnly: true}, {Buf: z, Size: 256}}, Groups: [3]uint32{1, 1, 1}})
	g.Free(z)
	submits, releases := g.SubmitCount(), g.Stats().Releases
	big := mustAlloc(t, g, 3<<19) // 1.5 MiB: over budget unless x's block goes
	if s := g.Stats(); g.SubmitCount() == submits || s.Releases != releases+1 || s.Reserved > s.Budget {
		t.Errorf("over-budget allocation in an open batch: %d submissions, stats %+v", g.SubmitCount()-submits, s)
	}
	if err := g.Sync(); err != nil {
		t.Fatal(err)
	}
	g.Free(y)
	g.Free(big)
}

func TestStats(t *testing.T) {
	g := openTestGPU(t)
	s0 := g.Stats()
	if s0.Budget != DefaultBudget || s0.Reserved != 0 || s0.Allocs != 0 {
		t.Fatalf("fresh stats: %+v", s0)
	}
	a := mustAlloc(t, g, 1000) // 1 KiB class
	s := g.Stats()
	if s.CacheMisses != 1 || s.CacheHits != 0 || s.Allocated != 1024 || s.Reserved != 1024 {
		t.Fatalf("after one alloc: %+v", s)
	}
	g.Free(a) // not referenced by the open batch: cached at once
	b := mustAlloc(t, g, 900)
	s = g.Stats()
	if s.CacheHits != 1 || s.CacheMisses != 1 || s.Reserved != 1024 {
		t.Fatalf("after reuse: %+v", s)
	}
	c := mustAlloc(t, g, 3<<20) // 3 MiB: a sub-class of 2 MiB..4 MiB
	if s = g.Stats(); s.PeakAllocated != 1024+3<<20 || s.PeakReserved != s.Reserved {
		t.Fatalf("peak: %+v", s)
	}
	g.Free(c)
	g.ResetPeak()
	if s = g.Stats(); s.PeakAllocated != 1024 {
		t.Fatalf("ResetPeak: %+v", s)
	}
	// Freed while the open batch reads it: cached and counted pending; a
	// same-size allocation reuses it inside the batch.
	y := mustAlloc(t, g, 1024)
	mustRun(t, g, Kernel{Source: wgslDouble, Bindings: []Binding{{Buf: b, ReadOnly: true}, {Buf: y}}, Groups: [3]uint32{4, 1, 1}})
	g.Free(b)
	if s = g.Stats(); s.Pending != 1024 {
		t.Fatalf("pending: %+v", s)
	}
	misses := s.CacheMisses
	d := mustAlloc(t, g, 1024)
	if s = g.Stats(); s.CacheMisses != misses || s.Pending != 0 {
		t.Fatalf("block freed in the open batch not reused within it: %+v", s)
	}
	// A second block freed in the batch is pending until the flush.
	mustRun(t, g, Kernel{Source: wgslDouble, Bindings: []Binding{{Buf: y, ReadOnly: true}, {Buf: d}}, Groups: [3]uint32{4, 1, 1}})
	y2 := mustAlloc(t, g, 1024)
	g.Free(y)
	if s = g.Stats(); s.Pending != 1024 {
		t.Fatalf("pending: %+v", s)
	}
	if err := g.Flush(); err != nil {
		t.Fatal(err)
	}
	if s = g.Stats(); s.Pending != 0 {
		t.Fatalf("pending after flush: %+v", s)
	}
	e := mustAlloc(t, g, 1024) // y's block
	if s = g.Stats(); s.CacheMisses != misses+1 {
		t.Fatalf("after flush: %+v", s)
	}
	var found bool
	for _, cl := range s.Classes {
		if cl.Size == 1024 {
			found = true
			if cl.InUse != 3 || cl.Hits < 3 {
				t.Errorf("1 KiB class: %+v", cl)
			}
		}
	}
	if !found {
		t.Errorf("no 1 KiB class in %+v", s.Classes)
	}
	str := s.String()
	for _, w := range []string{"allocated", "reserved", "1.00 KiB", "hits"} {
		if !strings.Contains(str, w) {
			t.Errorf("String() lacks %q:\n%s", w, str)
		}
	}
	t.Logf("\n%s", str)
	g.Free(d)
	g.Free(e)
	g.Free(y2)
}

func TestEmptyCache(t *testing.T) {
	g := openTestGPU(t)
	var bufs []*Buffer
	for i := range 6 {
		b := mustAlloc(t, g, int64(256<<i))
		mustWrite(t, g, b, make([]uint32, 64))
		mustRun(t, g, Kernel{Source: wgslInplace, Bindings: []Binding{{Buf: b}}, Groups: [3]uint32{1, 1, 1}})
		bufs = append(bufs, b)
	}
	keep := bufs[0]
	for _, b := range bufs[1:] {
		g.Free(b)
	}
	if err := g.Sync(); err != nil {
		t.Fatal(err)
	}
	before := g.Stats()
	g.EmptyCache()
	s := g.Stats()
	if s.Reserved != s.Allocated || s.Allocated != 256 || s.Releases != before.Releases+5 {
		t.Fatalf("EmptyCache: before %+v after %+v", before, s)
	}
	for _, c := range s.Classes {
		if c.Cached != 0 {
			t.Errorf("class %d still caches %d blocks", c.Size, c.Cached)
		}
	}
	// The kept buffer still works (its bind group survived).
	mustRun(t, g, Kernel{Source: wgslInplace, Bindings: []Binding{{Buf: keep}}, Groups: [3]uint32{1, 1, 1}})
	checkU32(t, "kept", readU32(t, g, keep), fillU32(64, func(int) uint32 { return 3 }))
}

func TestNoCache(t *testing.T) {
	g := openTestGPU(t, func(o *Options) { o.NoCache = true })
	g.SetBatchCap(1000)
	x := mustAlloc(t, g, 1024)
	y := mustAlloc(t, g, 1024)
	mustWrite(t, g, x, fillU32(256, func(i int) uint32 { return uint32(i) }))
	mustRun(t, g, double(x, y))
	g.Free(x) // the open batch reads x: released only after it finished
	if s := g.Stats(); s.Reserved != 2048 {
		t.Fatalf("freed block released while recorded work reads it: %+v", s)
	}
	z := mustAlloc(t, g, 1024)
	mustRun(t, g, double(y, z))
	checkU32(t, "no-cache chain", readU32(t, g, z), fillU32(256, func(i int) uint32 { return 4 * uint32(i) }))
	g.Free(y)
	g.Free(z)
	if err := g.Sync(); err != nil {
		t.Fatal(err)
	}
	s := g.Stats()
	if s.Reserved != 0 || s.CacheHits != 0 || s.CacheMisses != 3 || s.Releases != 3 {
		t.Fatalf("no-cache stats: %+v", s)
	}
}

func TestFillCopyRanges(t *testing.T) {
	g := openTestGPU(t)
	const n = 64
	a := mustAlloc(t, g, n*4)
	b := mustAlloc(t, g, n*4)
	mustWrite(t, g, a, fillU32(n, func(i int) uint32 { return uint32(i) + 1 }))
	if err := g.Fill(a, 16, 32); err != nil { // a[4:12] = 0
		t.Fatal(err)
	}
	if err := g.Copy(b, 0, a, 0, n*4); err != nil {
		t.Fatal(err)
	}
	if err := g.Copy(b, 0, b, 128, 64); err != nil { // overlapping self-copy: b[0:16] = b[32:48]
		t.Fatal(err)
	}
	want := fillU32(n, func(i int) uint32 { return uint32(i) + 1 })
	for i := 4; i < 12; i++ {
		want[i] = 0
	}
	copy(want[0:16], want[32:48])
	checkU32(t, "fill+copy", readU32(t, g, b), want)

	// Byte ranges: unaligned reads, a tail write that is not a multiple of
	// four bytes, and the errors for misaligned transfers.
	c := mustAlloc(t, g, 10)
	if err := g.Write(c, 0, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}); err != nil {
		t.Fatal(err)
	}
	got, err := g.Read(c, 3, 6)
	if err != nil || string(got) != string([]byte{4, 5, 6, 7, 8, 9}) {
		t.Fatalf("Read(3, 6) = %v, %v", got, err)
	}
	if err := g.Write(c, 0, []byte{1, 2, 3}); err == nil {
		t.Errorf("3-byte write not at the end accepted")
	}
	if err := g.Write(c, 2, []byte{1, 2, 3, 4}); err == nil {
		t.Errorf("misaligned write accepted")
	}
	if err := g.Write(c, 8, []byte{1, 2, 3, 4}); err == nil {
		t.Errorf("write past the end accepted")
	}
	if _, err := g.Read(c, 8, 4); err == nil {
		t.Errorf("read past the end accepted")
	}
	if got, err := g.Read(c, 5, 0); err != nil || len(got) != 0 {
		t.Errorf("empty read: %v, %v", got, err)
	}
}

// Several goroutines record and read back through one GPU.
func TestConcurrentUse(t *testing.T) {
	g := openTestGPU(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range 8 {
				n := 32 + 16*w
				x, err := g.Alloc(int64(n * 4))
				if err != nil {
					errs <- err
					return
				}
				y, _ := g.Alloc(int64(n * 4))
				base := uint32(w*1000 + it)
				if err := g.Write(x, 0, u32bytes(fillU32(n, func(i int) uint32 { return base + uint32(i) }))); err != nil {
					errs <- err
					return
				}
				if err := g.Run(double(x, y)); err != nil {
					errs <- err
					return
				}
				g.Free(x)
				out, err := g.Read(y, 0, y.Size())
				if err != nil {
					errs <- err
					return
				}
				for i, v := range bytesU32(out) {
					if v != 2*(base+uint32(i)) {
						errs <- errors.New("wrong value from a concurrent readback")
						return
					}
				}
				g.Free(y)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestCloseThenUse(t *testing.T) {
	g := openTestGPU(t)
	x := mustAlloc(t, g, 256)
	mustRun(t, g, Kernel{Source: wgslInplace, Bindings: []Binding{{Buf: x}}, Groups: [3]uint32{1, 1, 1}})
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Alloc(256); !errors.Is(err, ErrClosed) {
		t.Errorf("Alloc after Close: %v", err)
	}
	if err := g.Run(Kernel{Source: wgslInplace, Bindings: []Binding{{Buf: x}}, Groups: [3]uint32{1, 1, 1}}); !errors.Is(err, ErrClosed) {
		t.Errorf("Run after Close: %v", err)
	}
	g.Free(x) // no-op
}

func TestAdapters(t *testing.T) {
	list, err := Adapters()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range list {
		t.Logf("%s", a)
	}
	g := openTestGPU(t) // skips without an adapter
	info := g.Info()
	if info.Index < 0 || info.Index >= len(list) || list[info.Index].Name != info.Name {
		t.Errorf("Info %+v not in the adapter list", info)
	}
	// llvmpipe appears once, as lavapipe on Vulkan (the GL backend, which
	// lists it again, is not enumerated).
	lavapipe := 0
	for i, a := range list {
		if a.Index != i {
			t.Errorf("adapter %d has Index %d", i, a.Index)
		}
		if a.Backend == "gl" {
			t.Errorf("GL adapter listed: %s", a)
		}
		if strings.Contains(strings.ToLower(a.Name), "llvmpipe") {
			lavapipe++
			if !a.IsCPU || a.Type != "cpu" || a.Backend != "vulkan" {
				t.Errorf("llvmpipe listed as %+v", a)
			}
		}
	}
	if lavapipe > 1 {
		t.Errorf("llvmpipe listed %d times", lavapipe)
	}
	if lavapipe == 0 && info.IsCPU {
		t.Logf("CPU adapter is not lavapipe: %s", info)
	}
	// Automatic selection without AllowCPU never picks a CPU adapter.
	if g2, err := Open(Options{Index: -1}); err == nil {
		if g2.Info().IsCPU {
			t.Errorf("auto selection without AllowCPU picked %s", g2.Info())
		}
		g2.Close()
	} else if !errors.Is(err, ErrNoAdapter) {
		t.Errorf("Open without AllowCPU: %v", err)
	}
	if _, err := Open(Options{Index: -1, Adapter: "no-such-adapter-xyz"}); !errors.Is(err, ErrNoAdapter) {
		t.Errorf("unknown adapter name: %v", err)
	}
	if _, err := Open(Options{Index: len(list)}); !errors.Is(err, ErrNoAdapter) {
		t.Errorf("gpu:%d: %v", len(list), err)
	}
}

// The device is requested with the adapter's limits, not WebGPU's defaults
// (8 storage buffers, 16 KiB workgroup memory, 128 MiB bindings).
func TestCapsAreAdapterLimits(t *testing.T) {
	g := openTestGPU(t)
	l := adapterList.adapters[g.Info().Index].GetLimits().Limits
	c := g.Caps()
	if c.MaxStorageBuffersPerStage != int(l.MaxStorageBuffersPerShaderStage) ||
		c.MaxWorkgroupStorageSize != int(l.MaxComputeWorkgroupStorageSize) ||
		c.MaxInvocationsPerWorkgroup != int(l.MaxComputeInvocationsPerWorkgroup) ||
		c.MaxStorageBindingSize != clampInt64(l.MaxStorageBufferBindingSize) ||
		c.MaxBufferSize != clampInt64(l.MaxBufferSize) {
		t.Errorf("caps %+v differ from adapter limits %+v", c, l)
	}
	t.Logf("%+v", c)
}

// At most MaxInFlight submissions are in flight: the stream waits on the
// oldest before going further.
func TestInFlightBound(t *testing.T) {
	g := openTestGPU(t, func(o *Options) { o.MaxInFlight = 2; o.BatchCap = 1 })
	x := mustAlloc(t, g, 4096)
	mustWrite(t, g, x, make([]uint32, 1024))
	for i := range 40 {
		mustRun(t, g, Kernel{Source: wgslInplace, Bindings: []Binding{{Buf: x}}, Groups: [3]uint32{16, 1, 1}})
		g.mu.Lock()
		n := len(g.stream.inflight)
		g.mu.Unlock()
		if n > 2 {
			t.Fatalf("after dispatch %d: %d submissions in flight, MaxInFlight 2", i, n)
		}
	}
	// x = x*2+1 forty times from 0: 2^40-1 truncated to 32 bits.
	checkU32(t, "40 submissions", readU32(t, g, x), fillU32(1024, func(int) uint32 { return 1<<32 - 1 }))
}
