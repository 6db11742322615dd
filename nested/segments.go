package nested

import (
	"sync"
	"sync/atomic"

	"github.com/tessera-ml/tessera/tensor"
)

// A segIndex is the index of the segment reductions of one layout of
// offsets: the Int32 component id of every packed row. It is built on
// the host once and uploaded once per device, on first use, and shared
// by every Nested of those offsets (n.with keeps it), so that repeated
// reductions, and those of a chain of ops on one batch, reuse one
// upload. It is safe for concurrent use.
//
// The uploads are kept out of every Scope (tensor Keep): a Scope that
// closes around the first reduction must not release an index that
// later reductions reuse. They go back to the device with the Nesteds
// that share them, when the garbage collector finds those unreachable
// (the package has no Release of its own). An index is 4 bytes a row,
// at most a quarter of the values it indexes.
type segIndex struct {
	build sync.Once
	ids   []int32 // component id per row; read-only once built

	mu sync.Mutex
	on map[tensor.Device]*tensor.Tensor // uploads, by device
}

// segIndexUploads counts uploads of segment indexes, for the tests.
var segIndexUploads atomic.Int64

// segmentIDs returns the component id of every row of n, built once.
// The slice is shared: callers must not write to it.
func (n *Nested) segmentIDs() []int32 {
	n.seg.build.Do(func() {
		ids := make([]int32, n.offsets[len(n.offsets)-1])
		for b := range len(n.offsets) - 1 {
			for r := n.offsets[b]; r < n.offsets[b+1]; r++ {
				ids[r] = int32(b)
			}
		}
		n.seg.ids = ids
	})
	return n.seg.ids
}

// segments returns the Int32 component id of every row of n on n's
// device, the index of the segment reductions: uploaded on the first
// call for a device and reused by every later one, from any goroutine.
// It is kept (see segIndex), so it never decides the context of an op's
// result (tensor Context): use it only beside an operand that is not
// kept, as every segment reduction's fresh accumulator is.
func (n *Nested) segments() *tensor.Tensor {
	dev := n.values.Device()
	n.seg.mu.Lock()
	defer n.seg.mu.Unlock()
	if t := n.seg.on[dev]; t != nil {
		return t
	}
	t := indexOn(n.values, n.segmentIDs()).Keep()
	segIndexUploads.Add(1)
	if n.seg.on == nil {
		n.seg.on = map[tensor.Device]*tensor.Tensor{}
	}
	n.seg.on[dev] = t
	return t
}
