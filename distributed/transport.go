package distributed

import (
	"sync"
	"unsafe"
)

// An elemKind is the element type of a host buffer, and the MPI datatype
// that moves it. The order is the C side's table of datatypes.
type elemKind uint8

const (
	kindFloat32 elemKind = iota // MPI_FLOAT
	kindFloat64                 // MPI_DOUBLE
	kindInt32                   // MPI_INT
	kindInt64                   // MPI_INT64_T, for descriptors only
)

// A hostBuf is a host slice that a collective moves: []float32,
// []float64, []int32 or []int64.
type hostBuf struct{ data any }

// len returns the number of elements of b.
func (b hostBuf) len() int {
	switch s := b.data.(type) {
	case []float32:
		return len(s)
	case []float64:
		return len(s)
	case []int32:
		return len(s)
	case []int64:
		return len(s)
	}
	return 0
}

// kind returns b's element type.
func (b hostBuf) kind() elemKind {
	switch b.data.(type) {
	case []float64:
		return kindFloat64
	case []int32:
		return kindInt32
	case []int64:
		return kindInt64
	}
	return kindFloat32
}

// ptr returns the address of b's first element, nil when b is empty.
func (b hostBuf) ptr() unsafe.Pointer {
	if b.len() == 0 {
		return nil
	}
	switch s := b.data.(type) {
	case []float32:
		return unsafe.Pointer(&s[0])
	case []float64:
		return unsafe.Pointer(&s[0])
	case []int32:
		return unsafe.Pointer(&s[0])
	case []int64:
		return unsafe.Pointer(&s[0])
	}
	return nil
}

// slice returns b[lo:hi].
func (b hostBuf) slice(lo, hi int) hostBuf {
	switch s := b.data.(type) {
	case []float32:
		return hostBuf{s[lo:hi]}
	case []float64:
		return hostBuf{s[lo:hi]}
	case []int32:
		return hostBuf{s[lo:hi]}
	case []int64:
		return hostBuf{s[lo:hi]}
	}
	return b
}

// copyFrom copies src, of b's kind, to the start of b.
func (b hostBuf) copyFrom(src hostBuf) {
	switch s := b.data.(type) {
	case []float32:
		copy(s, src.data.([]float32))
	case []float64:
		copy(s, src.data.([]float64))
	case []int32:
		copy(s, src.data.([]int32))
	case []int64:
		copy(s, src.data.([]int64))
	}
}

// divide divides every element of a float buffer by n (Mean after Sum).
func (b hostBuf) divide(n int) {
	switch s := b.data.(type) {
	case []float32:
		d := float32(n)
		for i := range s {
			s[i] /= d
		}
	case []float64:
		d := float64(n)
		for i := range s {
			s[i] /= d
		}
	}
}

// A transport moves host buffers between the ranks of a group. Its
// methods run on the group's worker goroutine, one at a time, in the
// order the collectives were issued. op is Sum, Max or Min (Mean is a
// Sum that the group divides).
type transport interface {
	// allReduce replaces b on every rank by the elementwise reduction
	// of all ranks' b.
	allReduce(b hostBuf, op ReduceOp) error
	// broadcast copies root's b into every other rank's b.
	broadcast(b hostBuf, root int) error
	// allGather fills b, which holds size equal parts, with every rank's
	// part; this rank's own part is already in place.
	allGather(b hostBuf) error
	// reduceScatter reduces b, size equal parts, across the ranks and
	// leaves part rank of the result in b's first part.
	reduceScatter(b hostBuf, op ReduceOp) error
	barrier() error
	// finalize ends the transport; no method is called after it.
	finalize() error
}

// self is the transport of a world of one: every collective is the
// identity on the one rank's data.
type self struct{}

func (self) allReduce(hostBuf, ReduceOp) error     { return nil }
func (self) broadcast(hostBuf, int) error          { return nil }
func (self) allGather(hostBuf) error               { return nil }
func (self) reduceScatter(hostBuf, ReduceOp) error { return nil }
func (self) barrier() error                        { return nil }
func (self) finalize() error                       { return nil }

// A bufPool keeps host buffers for reuse by the next collective of the
// same dtype and element count (a training loop reduces the same buckets
// every step). A sync.Pool per size lets the garbage collector reclaim
// buffers a loop no longer uses.
type bufPool struct {
	mu    sync.Mutex
	pools map[poolKey]*sync.Pool
}

type poolKey struct {
	kind elemKind
	n    int
}

// get returns a buffer of n elements of kind; its contents are garbage.
func (p *bufPool) get(kind elemKind, n int) hostBuf {
	if b, ok := p.pool(kind, n).Get().(hostBuf); ok {
		return b
	}
	switch kind {
	case kindFloat64:
		return hostBuf{make([]float64, n)}
	case kindInt32:
		return hostBuf{make([]int32, n)}
	case kindInt64:
		return hostBuf{make([]int64, n)}
	}
	return hostBuf{make([]float32, n)}
}

// put hands b back for reuse; nothing may use it afterwards.
func (p *bufPool) put(b hostBuf) {
	if b.data == nil || b.len() == 0 {
		return
	}
	p.pool(b.kind(), b.len()).Put(b)
}

func (p *bufPool) pool(kind elemKind, n int) *sync.Pool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pools == nil {
		p.pools = map[poolKey]*sync.Pool{}
	}
	k := poolKey{kind, n}
	sp := p.pools[k]
	if sp == nil {
		sp = &sync.Pool{}
		p.pools[k] = sp
	}
	return sp
}
