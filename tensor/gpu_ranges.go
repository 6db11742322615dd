package tensor

import (
	"fmt"

	"github.com/tessera-ml/tessera/device"
	"github.com/tessera-ml/tessera/kernels/wgsl"
)

// A bindChunk is one dispatch of an elementwise op over part of its
// operands: views (the output first) with the buffer range each is bound
// by and the layout relative to that range.
type bindChunk struct {
	views   []*Tensor
	binds   []device.Binding
	layouts []wgsl.Layout
}

// bindingChunks splits an elementwise op so that no operand binds more
// than the device's per-binding limit (128 MiB on lavapipe; adapters'
// limits do not raise it). When every storage fits, it is one chunk
// binding whole buffers. Otherwise the outermost dimension is split into
// blocks whose touched element spans fit, recursing into the next
// dimension when a single index of it is still too large.
func (b *gpuBackend) bindingChunks(op string, ops []*Tensor) []bindChunk {
	limit := b.g.Caps().MaxStorageBindingSize
	fits := true
	for _, t := range ops {
		if gbuf(t).Size() > limit {
			fits = false
		}
	}
	if fits {
		c := bindChunk{views: ops}
		for _, t := range ops {
			c.binds = append(c.binds, device.Binding{Buf: gbuf(t)})
			c.layouts = append(c.layouts, wlay(t))
		}
		return []bindChunk{c}
	}
	var out []bindChunk
	b.split(op, ops, limit, &out)
	return out
}

// span returns the first element t touches and how many elements its
// view spans in storage.
func span(t *Tensor) (lo, n int) {
	n = 1
	for d, size := range t.shape {
		if size == 0 {
			return t.offset, 0
		}
		n += (size - 1) * t.strides[d]
	}
	return t.offset, n
}

// split appends chunks of ops (views of one shape) that each fit limit.
func (b *gpuBackend) split(op string, ops []*Tensor, limit int64, out *[]bindChunk) {
	align := int64(max(b.g.Caps().MinStorageOffsetAlignment, 4))
	// Slack for aligning a range's start down.
	budget := (limit - align) / 4
	fit := true
	for _, t := range ops {
		if _, n := span(t); int64(n) > budget {
			fit = false
		}
	}
	if fit {
		c := bindChunk{views: ops}
		for _, t := range ops {
			lo, n := span(t)
			start := int64(lo) * 4 / align * align
			size := (int64(lo+n)*4 - start + 3) &^ 3
			c.binds = append(c.binds, device.Binding{Buf: gbuf(t), Offset: start, Size: size})
			l := wlay(t)
			l.Offset = lo - int(start/4)
			c.layouts = append(c.layouts, l)
		}
		*out = append(*out, c)
		return
	}
	// Split the first dimension of size > 1.
	d := 0
	for d < len(ops[0].shape) && ops[0].shape[d] == 1 {
		d++
	}
	if d == len(ops[0].shape) {
		fail(op, device.ErrBindingTooLarge, fmt.Sprintf("a single element is beyond the binding limit of %d bytes", limit), ops...)
	}
	size := ops[0].shape[d]
	per := size
	for _, t := range ops {
		_, n := span(t)
		if t.strides[d] > 0 {
			// Rows of this dim that fit: (rows-1)*stride + rest <= budget.
			rest := int64(n - (size-1)*t.strides[d])
			rows := int((budget-rest)/int64(t.strides[d])) + 1
			per = min(per, max(rows, 1))
		}
	}
	if per >= size {
		per = size / 2
	}
	for s := 0; s < size; s += per {
		e := min(s+per, size)
		sub := make([]*Tensor, len(ops))
		for i, t := range ops {
			sub[i] = rawSlice(t, d, s, e, 1)
		}
		b.split(op, sub, limit, out)
	}
}
