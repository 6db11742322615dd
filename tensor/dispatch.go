package tensor

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// A backend runs primitive ops on one kind of device. Tensor methods
// check arguments, allocate outputs, broadcast inputs (as stride-0 views)
// and record provenance; a backend only computes. Operands arrive as
// Tensors whose storage lives on the backend's device, with any strides
// unless a method says otherwise; dst is written in place through its
// own layout.
type backend interface {
	alloc(dt DType, n int) (any, error)
	free(dt DType, buf any)
	// write copies a host slice ([]float32, []float64, []int32 or []bool
	// matching dst's dtype) into the contiguous tensor dst.
	write(dst *Tensor, src any)
	// read returns the elements of x in row-major order as a host slice.
	read(x *Tensor) any

	fill(dst *Tensor, v float64)
	copy(dst, x *Tensor)
	// sliceScatter writes src into dst's slice start, start+step, ...
	// along dim and zeros everywhere else (SliceScatter).
	sliceScatter(dst, src *Tensor, dim, start, step int)
	cast(dst, x *Tensor)
	unary(op Op, p [2]float64, dst, x *Tensor)
	binary(op Op, dst, x, y *Tensor)
	ternary(op Op, s float64, dst, a, b, c *Tensor)
	where(dst, cond, x, y *Tensor)
	// fusable reports whether a fused kernel may bind a storage of n
	// elements whole; fused computes the pending expression e into the
	// contiguous dst (fuse.go).
	fusable(n int) bool
	fused(dst *Tensor, e *fexpr)

	// reduce reduces x into dst, whose shape is x's with size 1 on the
	// reduced dims (op is OpSum, OpAmax or OpAmin).
	reduce(op Op, dst, x *Tensor)
	// argReduce writes the max (OpMaxDim) or min (OpMinDim) of x along
	// dim and its int32 index; vals may be nil.
	argReduce(op Op, vals, idx, x *Tensor, dim int)
	cumsum(dst, x *Tensor, dim int)
	softmax(log bool, dst, x *Tensor, dim int)
	// matmul computes dst (B,M,N, contiguous) = a (B,M,K) · b (B,K,N).
	matmul(dst, a, b *Tensor)

	indexSelect(dst, x, index *Tensor, dim int) error
	indexAdd(dst, index, src *Tensor, dim int) error
	indexAmax(dst, index, src *Tensor, dim int) error
	gather(dst, x, index *Tensor, dim int) error
	scatterAdd(dst, index, src *Tensor, dim int) error

	// unfold writes the windows of x (N, C, H, W) into the contiguous dst
	// (N, C·kh·kw, OH·OW), reading padding as pad; fold sums the columns
	// cols (N, C·kh·kw, OH·OW) into the contiguous dst (N, C, H, W).
	unfold(dst, x *Tensor, w window, pad float64)
	fold(dst, cols *Tensor, w window)

	// attention writes out (N, H, D) and lse (N, H), contiguous, the
	// segmented attention of the contiguous q, k, v (N, H, D) whose rows'
	// segments seg (2N int32) holds; attentionBackward writes its
	// gradients dq, dk, dv into the contiguous res (3, N, H, D) from the
	// contiguous out, lse and gradient g.
	attention(out, lse, q, k, v, seg *Tensor, a attnShape)
	attentionBackward(res, q, k, v, out, lse, g, seg *Tensor, a attnShape)

	// random fills the contiguous dst from the Philox stream (seed,
	// offset): uniform in [a, b) or normal with mean a and std b.
	random(normal bool, dst *Tensor, seed, offset uint64, a, b float64)
	// sync waits for queued work (a no-op on the CPU).
	sync() error
}

// The dispatch table is the only place a device maps to code: one entry
// per opened device, indexed by kind and index. The CPU entry is installed
// at init; a GPU's entry is installed when the device opens, on its first
// use (gpu.go). Ops read the table without a lock (backendOf): it is an
// immutable value behind an atomic pointer, replaced whole (copy on write)
// under dispatchTable.mu when a device opens. Opening is serialised by
// that lock, so each device opens once; a device that failed to open
// keeps its error, and every later use reports it.
type dispatchTable struct {
	cur atomic.Pointer[tableEntries] // never nil after init; read lock-free

	mu   sync.Mutex                    // serialises install and guards errs
	errs map[Device]error              // devices that failed to open
	open func(Device) (backend, error) // opens a device that has no entry
}

// tableEntries is one immutable version of the table: entries[k][i] is
// the backend of Device{k, i}, nil where that device has not opened.
type tableEntries [numDeviceKinds][]backend

// backends is the process's dispatch table.
var backends = newDispatchTable(openBackend)

// newDispatchTable returns a table with the CPU entry installed; open
// opens every other device on its first use.
func newDispatchTable(open func(Device) (backend, error)) *dispatchTable {
	t := &dispatchTable{open: open, errs: map[Device]error{}}
	var e tableEntries
	e[KindCPU] = []backend{cpuBackend{}}
	t.cur.Store(&e)
	return t
}

// lookup returns dev's entry if it has one; it takes no lock.
func (t *dispatchTable) lookup(dev Device) backend {
	if dev.Kind < numDeviceKinds {
		if row := t.cur.Load()[dev.Kind]; uint(dev.Index) < uint(len(row)) {
			return row[dev.Index]
		}
	}
	return nil
}

// get returns dev's backend, opening dev and installing its entry on
// first use, or the error that opening it gave (then or earlier).
func (t *dispatchTable) get(dev Device) (backend, error) {
	if b := t.lookup(dev); b != nil {
		return b, nil
	}
	if dev.Kind == KindCPU { // one CPU, whatever a CPU Device's Index says
		return t.cur.Load()[KindCPU][0], nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if b := t.lookup(dev); b != nil { // opened while we waited
		return b, nil
	}
	if err := t.errs[dev]; err != nil {
		return nil, err
	}
	b, err := t.open(dev)
	if err != nil {
		t.errs[dev] = err
		return nil, err
	}
	old := t.cur.Load()
	next := *old // copies the array of slice headers, not the slices
	row := make([]backend, max(len(old[dev.Kind]), dev.Index+1))
	copy(row, old[dev.Kind])
	row[dev.Index] = b
	next[dev.Kind] = row
	t.cur.Store(&next)
	return b, nil
}

// each calls f with every installed backend of kind k, lock-free.
func (t *dispatchTable) each(k DeviceKind, f func(backend)) {
	for _, b := range t.cur.Load()[k] {
		if b != nil {
			f(b)
		}
	}
}

// openBackend opens a device that has no entry yet: a GPU (gpu.go).
func openBackend(dev Device) (backend, error) {
	switch {
	case dev.Kind != KindGPU:
		return nil, fmt.Errorf("tensor: unknown device kind %d", dev.Kind)
	case dev.Index < 0:
		return nil, fmt.Errorf("tensor: bad device %v: a GPU index is at least 0", dev)
	}
	b, err := openGPU(dev)
	if err != nil {
		return nil, fmt.Errorf("tensor: cannot open %v: %w", dev, err)
	}
	return b, nil
}

// backendOf returns the backend of dev, opening dev on first use. It
// panics with an ErrDevice *Error when dev cannot be opened. The hot path
// is an atomic load and two bounds checks, small enough to be inlined.
func backendOf(dev Device) backend {
	if b := backends.lookup(dev); b != nil {
		return b
	}
	return openedBackend(dev)
}

// openedBackend is backendOf's slow path: it opens dev, or panics.
func openedBackend(dev Device) backend {
	b, err := backends.get(dev)
	if err != nil {
		panic(&Error{Op: "device", Err: ErrDevice, Detail: err.Error(), Devices: []Device{dev}})
	}
	return b
}

// Sync waits until every queued op on dev has finished. Benchmarks call
// it inside the timed loop; reading a tensor's data syncs implicitly.
func Sync(dev Device) error { return backendOf(dev).sync() }
