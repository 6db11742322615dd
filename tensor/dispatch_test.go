package tensor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
)

// testGPU returns a GPU for the tests of this file, which cannot use
// internal/devtest (it imports tensor): without one it skips, or fails
// when TESSERA_REQUIRE_GPU=1.
func testGPU(tb testing.TB) Device {
	tb.Helper()
	d, err := TestGPU()
	if err != nil {
		if os.Getenv("TESSERA_REQUIRE_GPU") == "1" {
			tb.Fatalf("TESSERA_REQUIRE_GPU=1 but no GPU opens: %v", err)
		}
		tb.Skipf("no GPU: %v", err)
	}
	return d
}

// sinkBackend keeps the benchmark's lookups from being optimised away.
var sinkBackend backend

// BenchmarkBackendOf measures the dispatch table lookup every op makes,
// for the CPU and for an opened GPU, from one goroutine and from all.
func BenchmarkBackendOf(b *testing.B) {
	gpu := testGPU(b)
	for _, dev := range []Device{CPU, gpu} {
		name := [...]string{KindCPU: "cpu", KindGPU: "gpu"}[dev.Kind]
		b.Run(name, func(b *testing.B) {
			for range b.N {
				sinkBackend = backendOf(dev)
			}
		})
		b.Run(name+"-parallel", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if backendOf(dev) == nil {
						b.Error("backendOf returned nil")
						return
					}
				}
			})
		})
	}
}

// TestDispatchTableConcurrentOpen asks a fresh table for one GPU from
// several goroutines at once: the device opens once, every goroutine gets
// its backend and uses it, and the CPU entry is there from the start.
func TestDispatchTableConcurrentOpen(t *testing.T) {
	gpu := testGPU(t)
	var opens atomic.Int32
	tb := newDispatchTable(func(d Device) (backend, error) {
		opens.Add(1)
		return openBackend(d)
	})
	const n = 8
	got := make([]backend, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if tb.lookup(CPU) != (cpuBackend{}) {
				errs[i] = errors.New("no CPU entry")
				return
			}
			if got[i], errs[i] = tb.get(gpu); errs[i] == nil {
				errs[i] = roundTrip(got[i].(*gpuBackend), uint32(i))
			}
		})
	}
	wg.Wait()
	if got[0] != nil {
		defer got[0].(*gpuBackend).g.Close()
	}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("goroutine %d: %v", i, errs[i])
		}
		if got[i] != got[0] {
			t.Fatalf("goroutine %d got another backend for %v", i, gpu)
		}
	}
	if k := opens.Load(); k != 1 {
		t.Fatalf("%v opened %d times, want once", gpu, k)
	}
	if tb.lookup(gpu) != got[0] {
		t.Fatalf("the table has no entry for %v after it opened", gpu)
	}
}

// roundTrip writes 33 words of v into a fresh buffer of b's GPU and reads
// them back.
func roundTrip(b *gpuBackend, v uint32) error {
	buf, err := b.g.Alloc(4 * 33)
	if err != nil {
		return err
	}
	defer b.g.Free(buf)
	data := make([]byte, 4*33)
	for i := range 33 {
		binary.LittleEndian.PutUint32(data[4*i:], v*1000+uint32(i))
	}
	if err := b.g.Write(buf, 0, data); err != nil {
		return err
	}
	back, err := b.g.Read(buf, 0, int64(len(data)))
	if err != nil {
		return err
	}
	if string(back) != string(data) {
		return fmt.Errorf("read back % x, want % x", back[:8], data[:8])
	}
	return nil
}

// TestDispatchTableConcurrentOpenError: a device that fails to open,
// asked for from several goroutines at once, is tried once and keeps its
// error, which every use reports; it gets no entry.
func TestDispatchTableConcurrentOpenError(t *testing.T) {
	var opens atomic.Int32
	tb := newDispatchTable(func(d Device) (backend, error) {
		opens.Add(1)
		return nil, fmt.Errorf("cannot open %v", d)
	})
	const n = 8
	errs := make([]error, n+1)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { _, errs[i] = tb.get(GPU(3)) })
	}
	wg.Wait()
	_, errs[n] = tb.get(GPU(3))
	for i, err := range errs {
		if err == nil || err != errs[0] {
			t.Fatalf("use %d: error %v, want the first error %v", i, err, errs[0])
		}
	}
	if k := opens.Load(); k != 1 {
		t.Fatalf("opened %d times, want once", k)
	}
	if tb.lookup(GPU(3)) != nil {
		t.Fatal("a device that failed to open has an entry")
	}
}

// TestBackendOfBadDevices: devices that cannot exist panic with an
// ErrDevice *Error naming them, and Available says why, every time.
func TestBackendOfBadDevices(t *testing.T) {
	for _, d := range []Device{GPU(-1), GPU(1 << 20), {Kind: 7}} {
		first := Available(d)
		if first == nil {
			t.Fatalf("Available(%v) = nil", d)
		}
		if again := Available(d); again == nil || again.Error() != first.Error() {
			t.Fatalf("Available(%v) again = %v, want %v", d, again, first)
		}
		err := Catch(func() { backendOf(d) })
		var te *Error
		if !errors.Is(err, ErrDevice) || !errors.As(err, &te) || len(te.Devices) != 1 || te.Devices[0] != d {
			t.Fatalf("backendOf(%v): %v, want an ErrDevice *Error naming it", d, err)
		}
	}
	if b := backendOf(Device{Kind: KindCPU, Index: 5}); b != (cpuBackend{}) {
		t.Fatalf("backendOf(cpu index 5) = %T, want the CPU backend", b)
	}
}

// TestConcurrentGPUDispatch runs ops on one GPU from several goroutines
// at once, through the process's table, while others ask for the device
// and empty the caches; every result matches the CPU's. CI runs it under
// -race.
func TestConcurrentGPUDispatch(t *testing.T) {
	gpu := testGPU(t)
	const n = 6
	errs := make([]error, n+1)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = Catch(func() {
				for step := range 5 {
					want := dispatchProgram(CPU, i, step)
					got := dispatchProgram(gpu, i, step)
					if fmt.Sprint(got) != fmt.Sprint(want) {
						panic(fmt.Sprintf("goroutine %d step %d: gpu %v, cpu %v", i, step, got, want))
					}
				}
			})
		})
	}
	wg.Go(func() {
		for range 20 {
			if errs[n] = Available(gpu); errs[n] != nil {
				return
			}
			if _, errs[n] = GPUDevice(gpu); errs[n] != nil {
				return
			}
			EmptyCache()
		}
	})
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("goroutine %d: %v", i, err)
		}
	}
}

// dispatchProgram computes sum((x*y)+x) over 33 small integers on dev,
// exactly representable in float32.
func dispatchProgram(dev Device, i, step int) []float32 {
	xs, ys := make([]float32, 33), make([]float32, 33)
	for k := range xs {
		xs[k], ys[k] = float32(k+i), float32(step-k%5)
	}
	x := From(xs, []int{3, 11}, On(dev))
	y := From(ys, []int{3, 11}, On(dev))
	xy := x.Mul(y)
	z := xy.Add(x)
	s := z.SumDims([]int{1}, false)
	defer func() {
		for _, t := range []*Tensor{x, y, xy, z, s} {
			t.Release()
		}
	}()
	return s.Float32s()
}
