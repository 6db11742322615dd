package bench

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"time"

	"github.com/tessera-ml/tessera/device"
	"github.com/tessera-ml/tessera/tensor"
)

// tesseraCase is a workload set up at one size on one Tessera device,
// with the memory and dispatches measured over its warm-up steps.
type tesseraCase struct {
	dev        tensor.Device
	c          Case
	mem        *Memory
	dispatches float64 // per step; 0 on the CPU
	allocBytes float64 // tensor memory allocated per step
}

// openTessera sets w up at size s on dev and runs two warm-up steps
// (pipelines compiled, pools and optimizer state filled), measuring peak
// memory from before the setup to the end of the warm-up, the tensor
// memory the second step allocates and, on a GPU, its dispatches. The caches are emptied first so that
// one case's pooled blocks do not hide the next one's allocations.
func openTessera(w *Workload, s Size, dev tensor.Device) (*tesseraCase, error) {
	var gpu *device.GPU
	if dev.Kind == tensor.KindGPU {
		g, err := tensor.GPUDevice(dev)
		if err != nil {
			return nil, err
		}
		gpu = g
	}
	tensor.EmptyCache()
	runtime.GC()
	var peak func() *Memory
	if gpu != nil {
		gpu.ResetPeak()
		base := gpu.Stats().Allocated
		peak = func() *Memory { return &Memory{Bytes: gpu.Stats().PeakAllocated - base, Kind: "gpu-peak"} }
	} else {
		stop := sampleHeap()
		peak = func() *Memory { return &Memory{Bytes: stop(), Kind: "go-heap-peak"} }
	}
	tc := &tesseraCase{dev: dev}
	err := protect(func() error {
		tc.c = w.Setup(dev, s)
		if err := tc.warm(); err != nil {
			return err
		}
		before, alloc := dispatches(gpu), tensor.ReadCounters().StorageBytes
		if err := tc.warm(); err != nil {
			return err
		}
		tc.dispatches = float64(dispatches(gpu) - before)
		tc.allocBytes = float64(tensor.ReadCounters().StorageBytes - alloc)
		return nil
	})
	tc.mem = peak() // also stops the heap sampler
	if err != nil {
		if tc.c.Release != nil {
			tc.c.Release()
		}
		return nil, err
	}
	return tc, nil
}

func (tc *tesseraCase) warm() error {
	tc.c.Step()
	return tensor.Sync(tc.dev)
}

func dispatches(gpu *device.GPU) int64 {
	if gpu == nil {
		return 0
	}
	return gpu.DispatchCount()
}

// time runs steps, waiting for the device after each, until minTime has
// passed and at least minIters steps ran; it returns the seconds and steps.
// The case's Warm steps come first, untimed.
func (tc *tesseraCase) time(minTime time.Duration, minIters int) (sec float64, iters int, err error) {
	// Start from a collected heap, as testing.B does before a benchmark:
	// the garbage of the case measured before (hundreds of MiB for a
	// convolution) is otherwise collected inside this measurement.
	runtime.GC()
	err = protect(func() error {
		for warm := time.Now(); time.Since(warm) < tc.c.Warm; {
			if err := tc.warm(); err != nil {
				return err
			}
		}
		start := time.Now()
		for {
			tc.c.Step()
			if err := tensor.Sync(tc.dev); err != nil {
				return err
			}
			iters++
			if el := time.Since(start); el >= minTime && iters >= minIters {
				sec = el.Seconds()
				return nil
			}
		}
	})
	return sec, iters, err
}

// sampleHeap starts sampling the bytes of Go heap objects (live and not
// yet swept; the tensor package's pooled CPU buffers are among them)
// every millisecond; stop ends it and returns the peak above the value
// at the start.
func sampleHeap() (stop func() int64) {
	read := func() int64 {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		metrics.Read(s)
		return int64(s[0].Value.Uint64())
	}
	base := read()
	var peak atomic.Int64
	peak.Store(base)
	record := func() {
		for v := read(); ; {
			p := peak.Load()
			if v <= p || peak.CompareAndSwap(p, v) {
				return
			}
		}
	}
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				record()
			}
		}
	}()
	return func() int64 {
		close(done)
		<-finished
		record()
		return peak.Load() - base
	}
}

// protect runs f, returning a panic as its error (see catch).
func protect(f func() error) (err error) {
	defer catch(&err)
	return f()
}

// catch turns a panic (a *tensor.Error from misuse or an exhausted GPU,
// or any other value) into *err, so that one failing case does not end
// the run.
func catch(err *error) {
	r := recover()
	if r == nil {
		return
	}
	if e, ok := r.(error); ok {
		var rerr runtime.Error
		if errors.As(e, &rerr) {
			*err = fmt.Errorf("internal error: %w", e)
			return
		}
		*err = e
		return
	}
	*err = fmt.Errorf("panic: %v", r)
}
