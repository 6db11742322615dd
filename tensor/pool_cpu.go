package tensor

import (
	"math/bits"
	"sync"
)

// cpuPool caches released CPU buffers by dtype and power-of-two capacity,
// so a training loop that allocates the same shapes every step reuses
// its memory instead of asking the garbage collector for more. It holds
// at most cpuPoolLimit bytes; beyond that, released buffers go to the GC.
var cpuPool = &slicePool{free: map[poolKey][]any{}}

const cpuPoolLimit = 512 << 20

type poolKey struct {
	dt    DType
	class int // capacity, a power of two
}

type slicePool struct {
	mu     sync.Mutex
	free   map[poolKey][]any
	cached int // bytes held in free
}

func sizeClass(n int) int {
	if n <= 16 {
		return 16
	}
	return 1 << bits.Len(uint(n-1))
}

// get returns a slice of n elements of dt; its contents are undefined.
func (p *slicePool) get(dt DType, n int) any {
	k := poolKey{dt, sizeClass(n)}
	p.mu.Lock()
	if l := p.free[k]; len(l) > 0 {
		buf := l[len(l)-1]
		p.free[k] = l[:len(l)-1]
		p.cached -= k.class * dt.Size()
		p.mu.Unlock()
		return reslice(buf, n)
	}
	p.mu.Unlock()
	switch dt {
	case Float32:
		return make([]float32, n, k.class)
	case Float64:
		return make([]float64, n, k.class)
	case Int32:
		return make([]int32, n, k.class)
	}
	return make([]bool, n, k.class)
}

// put caches buf for reuse.
func (p *slicePool) put(buf any) {
	dt, c := bufInfo(buf)
	if c != sizeClass(c) { // not from get
		return
	}
	k := poolKey{dt, c}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cached+c*dt.Size() > cpuPoolLimit {
		return
	}
	p.free[k] = append(p.free[k], buf)
	p.cached += c * dt.Size()
}

// emptyCache drops every cached buffer.
func (p *slicePool) emptyCache() {
	p.mu.Lock()
	p.free = map[poolKey][]any{}
	p.cached = 0
	p.mu.Unlock()
}

func bufInfo(buf any) (DType, int) {
	switch b := buf.(type) {
	case []float32:
		return Float32, cap(b)
	case []float64:
		return Float64, cap(b)
	case []int32:
		return Int32, cap(b)
	case []bool:
		return Bool, cap(b)
	}
	panic("tensor: unknown CPU buffer")
}

func reslice(buf any, n int) any {
	switch b := buf.(type) {
	case []float32:
		return b[:n]
	case []float64:
		return b[:n]
	case []int32:
		return b[:n]
	case []bool:
		return b[:n]
	}
	panic("tensor: unknown CPU buffer")
}

// EmptyCache returns cached, unused memory of every device to its
// allocator (the Go heap on the CPU, the driver on the GPU).
func EmptyCache() { cpuPool.emptyCache(); gpuEmptyCache() }
