package tensor

import (
	"encoding/binary"
	"math"

	"github.com/tessera-ml/tessera/device"
	"github.com/tessera-ml/tessera/kernels/wgsl"
)

// gpuBackend runs ops as WGSL compute kernels (package kernels/wgsl)
// through the WebGPU runtime (package device). A storage's buffer is a
// *device.Buffer of 4-byte elements: f32, i32, or bool stored as u32.
// Kernels are recorded into the runtime's open batch; reading data
// flushes and waits.
type gpuBackend struct {
	dev    Device
	g      *device.GPU
	lim    wgsl.Limits
	checks deferredChecks // index checks run on the device (index_range.go)
}

func newGPUBackend(dev Device, g *device.GPU) *gpuBackend {
	c := g.Caps()
	return &gpuBackend{dev: dev, g: g, lim: wgsl.Limits{
		MaxWorkgroupSize:          min(c.MaxInvocationsPerWorkgroup, c.MaxWorkgroupSizeX),
		MaxWorkgroupStorage:       c.MaxWorkgroupStorageSize,
		MaxWorkgroupsPerDimension: c.MaxWorkgroupsPerDimension,
	}}
}

// wgslType names dt's element type in the kernel generators.
func wgslType(dt DType) string {
	switch dt {
	case Int32:
		return wgsl.I32
	case Bool:
		return wgsl.Bool
	}
	return wgsl.F32
}

func wlay(t *Tensor) wgsl.Layout {
	return wgsl.Layout{Shape: t.shape, Strides: t.strides, Offset: t.offset}
}

// gbuf returns t's GPU buffer, realizing t first if it is pending.
func gbuf(t *Tensor) *device.Buffer { return t.ref.s.memory().(*device.Buffer) }

// check turns an environment failure (out of memory, device lost, a
// kernel the driver rejects, an operand whose contents a failed GPU batch
// could not produce: device.CommandFailedError) into the op's panic, a
// *Error wrapping the device's error.
func (b *gpuBackend) check(op string, err error) {
	if err != nil {
		panic(&Error{Op: op, Err: err, Devices: []Device{b.dev}})
	}
}

func (b *gpuBackend) alloc(dt DType, n int) (any, error) {
	if !b.dev.Holds(dt) {
		return nil, ErrDType
	}
	// No padding here: the device pads every block and binding to whole
	// 16-byte quanta (package device's one rule), which vec4 kernels need.
	return b.g.Alloc(int64(n) * 4)
}

func (b *gpuBackend) free(dt DType, buf any) { b.g.Free(buf.(*device.Buffer)) }

func (b *gpuBackend) write(dst *Tensor, src any) {
	defer unpin(pin(dst))
	if v, ok := src.([]int32); ok {
		lo, hi := int32Range(v)
		dst.ref.s.setIndexRange(lo, hi, true)
	}
	b.check("write", b.g.Write(gbuf(dst), 0, encode(src)))
}

func (b *gpuBackend) read(x *Tensor) any {
	defer unpin(pin(x))
	b.checks.raise(b)
	src := x
	if !x.IsContiguous() {
		src = newTensor(x.dtype, x.shape, b.dev)
		defer src.Release()
		b.copy(src, x)
	}
	n := x.Numel()
	if n == 0 {
		return decode(x.dtype, nil)
	}
	data, err := b.g.Read(gbuf(src), int64(src.offset)*4, int64(n)*4)
	b.check("read", err)
	return decode(x.dtype, data)
}

// encode packs a host slice into 4-byte little-endian elements.
func encode(src any) []byte {
	switch s := src.(type) {
	case []float32:
		out := make([]byte, 4*len(s))
		for i, v := range s {
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(v))
		}
		return out
	case []int32:
		out := make([]byte, 4*len(s))
		for i, v := range s {
			binary.LittleEndian.PutUint32(out[4*i:], uint32(v))
		}
		return out
	case []bool:
		out := make([]byte, 4*len(s))
		for i, v := range s {
			if v {
				out[4*i] = 1
			}
		}
		return out
	}
	panic("tensor: cannot upload this dtype to the GPU")
}

func decode(dt DType, data []byte) any {
	n := len(data) / 4
	switch dt {
	case Float32:
		out := make([]float32, n)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		return out
	case Int32:
		out := make([]int32, n)
		for i := range out {
			out[i] = int32(binary.LittleEndian.Uint32(data[4*i:]))
		}
		return out
	case Bool:
		out := make([]bool, n)
		for i := range out {
			out[i] = binary.LittleEndian.Uint32(data[4*i:]) != 0
		}
		return out
	}
	panic("tensor: no such GPU dtype")
}

// run records kernel k, binding each of its named buffers whole.
func (b *gpuBackend) run(op string, k wgsl.Kernel, err error, bufs map[string]*device.Buffer) {
	binds := make(map[string]device.Binding, len(bufs))
	for name, buf := range bufs {
		binds[name] = device.Binding{Buf: buf}
	}
	b.runBound(op, k, err, binds)
}

// runBound records kernel k with the given binding ranges by name.
func (b *gpuBackend) runBound(op string, k wgsl.Kernel, err error, bufs map[string]device.Binding) {
	b.check(op, err)
	if k.Groups[0] == 0 || k.Groups[1] == 0 || k.Groups[2] == 0 {
		return
	}
	binds := make([]device.Binding, len(k.Bindings))
	for i, kb := range k.Bindings {
		bb, ok := bufs[kb.Name]
		if !ok {
			panic("tensor: kernel binding " + kb.Name + " has no buffer")
		}
		bb.ReadOnly = kb.ReadOnly
		binds[i] = bb
	}
	b.check(op, b.g.Run(device.Kernel{Label: op, Source: k.Source, Entry: k.Entry, Bindings: binds, Params: k.Params, Groups: k.Groups}))
}

// runPlan records the kernels of plan p in order, allocating its scratch
// buffer (bound as "scratch"; freed once recorded, which the allocator
// allows while recorded work still uses it).
func (b *gpuBackend) runPlan(op string, p wgsl.Plan, err error, bufs map[string]*device.Buffer) {
	b.check(op, err)
	if p.Scratch > 0 {
		s, err := b.g.Alloc(p.Scratch)
		b.check(op, err)
		defer b.g.Free(s)
		bufs["scratch"] = s
	}
	for _, k := range p.Kernels {
		b.run(op, k, nil, bufs)
	}
}

// elementwise runs expr over dst's shape with inputs already broadcast.
// Operands whose storage exceeds the per-binding limit are bound by
// ranges, the dispatch split into chunks that fit (gpu_ranges.go).
func (b *gpuBackend) elementwise(op, expr string, p [2]float64, dst *Tensor, ins ...*Tensor) {
	defer unpin(pin(dst))
	for _, c := range b.bindingChunks(op, append([]*Tensor{dst}, ins...)) {
		b.elementwiseChunk(op, expr, p, c)
	}
}

// elementwiseChunk runs one chunk: c.views[0] is the output, the rest
// the inputs, each with the binding range c.binds[i] and a layout whose
// offset is relative to the start of its range.
func (b *gpuBackend) elementwiseChunk(op, expr string, p [2]float64, c bindChunk) {
	dst, ins := c.views[0], c.views[1:]
	types := make([]string, len(ins))
	lays := make([]wgsl.Layout, len(ins))
	alias := make([]bool, len(ins))
	bufs := map[string]device.Binding{"out": c.binds[0]}
	names := []string{"x", "y", "z"}
	for i, t := range ins {
		types[i], lays[i] = wgslType(t.dtype), c.layouts[i+1]
		if t.ref.s == dst.ref.s && c.binds[i+1] == c.binds[0] {
			alias[i] = true
		} else {
			bufs[names[i]] = c.binds[i+1]
		}
	}
	k, err := wgsl.Elementwise(expr, types, wgslType(dst.dtype), wgsl.ElementwiseArgs{
		Out: c.layouts[0], In: lays, Alias: alias, P0: p[0], P1: p[1], Limits: b.lim,
	})
	b.runBound(op, k, err, bufs)
}

func (b *gpuBackend) fill(dst *Tensor, v float64) {
	defer unpin(pin(dst))
	expr := "p0"
	if dst.dtype == Bool {
		expr = "p0 != 0.0 || isnan_(p0)" // the scalar is an f32; bool(NaN) is true
	}
	b.elementwise("fill", expr, [2]float64{v}, dst)
}

func (b *gpuBackend) copy(dst, x *Tensor) { b.elementwise("copy", "x", [2]float64{}, dst, x) }

func (b *gpuBackend) cast(dst, x *Tensor) {
	defer unpin(pin(dst, x))
	b.elementwise("Cast", castExpr(x.dtype, dst.dtype), [2]float64{}, dst, x)
}

// castExpr is the WGSL expression converting x of dtype from to to.
func castExpr(from, to DType) string {
	switch {
	case to == Bool && from == Float32:
		// bool(NaN) is true, as in Go and PyTorch; the bit test survives
		// compilers that assume no NaN (lavapipe folds NaN != 0 to false).
		return "x != 0.0 || isnan_(x)"
	case to == Bool:
		return "x != " + wgslZero(from)
	case from == Bool:
		return "select(" + wgslZero(to) + ", " + wgslOne(to) + ", x)"
	}
	return wgslType(to) + "(x)"
}

func wgslZero(dt DType) string {
	switch dt {
	case Int32:
		return "0i"
	case Bool:
		return "false"
	}
	return "0.0"
}

func wgslOne(dt DType) string {
	if dt == Int32 {
		return "1i"
	}
	return "1.0"
}

// unary, binary and ternary run the op's row expression for the
// inputs' dtype (the dtype it computes in).
func (b *gpuBackend) unary(op Op, p [2]float64, dst, x *Tensor) {
	defer unpin(pin(dst, x))
	b.elementwise(op.String(), op.info().wgslFor(x.dtype), p, dst, x)
}

func (b *gpuBackend) binary(op Op, dst, x, y *Tensor) {
	defer unpin(pin(dst, x, y))
	b.elementwise(op.String(), op.info().wgslFor(x.dtype), [2]float64{}, dst, x, y)
}

func (b *gpuBackend) ternary(op Op, s float64, dst, a, x, y *Tensor) {
	defer unpin(pin(dst, a, x, y))
	b.elementwise(op.String(), op.info().wgslFor(a.dtype), [2]float64{s}, dst, a, x, y)
}

func (b *gpuBackend) where(dst, cond, x, y *Tensor) {
	defer unpin(pin(dst, cond, x, y))
	b.elementwise("Where", OpWhere.info().wgsl, [2]float64{}, dst, cond, x, y)
}

func (b *gpuBackend) reduce(op Op, dst, x *Tensor) {
	if b.reduceFused(op, dst, x) {
		return
	}
	defer unpin(pin(dst, x))
	p, err := wgsl.Reduce(op.info().reduce.wgsl, wgslType(x.dtype), wlay(dst), wlay(x), b.lim)
	b.runPlan(op.String(), p, err, map[string]*device.Buffer{"out": gbuf(dst), "x": gbuf(x)})
}

func (b *gpuBackend) argReduce(op Op, vals, idx, x *Tensor, dim int) {
	defer unpin(pin(vals, idx, x))
	bufs := map[string]*device.Buffer{"idx": gbuf(idx), "x": gbuf(x)}
	var vl *wgsl.Layout
	if vals != nil {
		l := wlay(vals)
		vl = &l
		bufs["vals"] = gbuf(vals)
	}
	p, err := wgsl.ArgReduce(op.info().reduce.wgsl, wgslType(x.dtype), wlay(idx), vl, wlay(x), dim, b.lim)
	b.runPlan(op.String(), p, err, bufs)
	idx.ref.s.setIndexRange(0, int64(x.shape[dim]-1), false)
}

func (b *gpuBackend) sync() error {
	if err := Catch(func() { b.checks.raise(b) }); err != nil {
		return err
	}
	return b.g.Sync()
}

func (b *gpuBackend) lineArgs(dst, x *Tensor, dim int) wgsl.LineArgs {
	return wgsl.LineArgs{Out: wlay(dst), X: wlay(x), Dim: dim, InPlace: dst.ref.s == x.ref.s, Limits: b.lim}
}

func (b *gpuBackend) lineBufs(dst, x *Tensor) map[string]*device.Buffer {
	bufs := map[string]*device.Buffer{"out": gbuf(dst)}
	if dst.ref.s != x.ref.s {
		bufs["x"] = gbuf(x)
	}
	return bufs
}

func (b *gpuBackend) cumsum(dst, x *Tensor, dim int) {
	defer unpin(pin(dst, x))
	p, err := wgsl.CumSum(wgslType(x.dtype), b.lineArgs(dst, x, dim))
	b.runPlan("CumSum", p, err, b.lineBufs(dst, x))
}

func (b *gpuBackend) softmax(log bool, dst, x *Tensor, dim int) {
	defer unpin(pin(dst, x))
	p, err := wgsl.Softmax(log, b.lineArgs(dst, x, dim))
	b.runPlan("Softmax", p, err, b.lineBufs(dst, x))
}

func (b *gpuBackend) matmul(dst, a, m *Tensor) {
	defer unpin(pin(dst, a, m))
	p, err := wgsl.MatMul(wlay(dst), wlay(a), wlay(m), b.lim)
	b.runPlan("MatMul", p, err, map[string]*device.Buffer{"out": gbuf(dst), "a": gbuf(a), "b": gbuf(m)})
}

// The GPU index kernels skip out-of-range indices (they never write out
// of bounds); the tensor layer rejects such indices before dispatching
// (index_range.go), so these return no error.

func (b *gpuBackend) indexSelect(dst, x, index *Tensor, dim int) error {
	defer unpin(pin(dst, x, index))
	k, err := wgsl.IndexSelect(wlay(dst), wlay(x), dim, wlay(index), b.lim)
	b.run("IndexSelect", k, err, map[string]*device.Buffer{"out": gbuf(dst), "x": gbuf(x), "index": gbuf(index)})
	return nil
}

func (b *gpuBackend) indexAdd(dst, index, src *Tensor, dim int) error {
	defer unpin(pin(dst, index, src))
	p, err := wgsl.IndexAdd(wgslType(dst.dtype), wlay(dst), dim, wlay(index), wlay(src), b.lim)
	b.runPlan("IndexAdd", p, err, map[string]*device.Buffer{"dst": gbuf(dst), "index": gbuf(index), "src": gbuf(src)})
	return nil
}

func (b *gpuBackend) indexAmax(dst, index, src *Tensor, dim int) error {
	defer unpin(pin(dst, index, src))
	p, err := wgsl.IndexAmax(wgslType(dst.dtype), wlay(dst), dim, wlay(index), wlay(src), b.lim)
	b.runPlan("IndexAmax", p, err, map[string]*device.Buffer{"dst": gbuf(dst), "index": gbuf(index), "src": gbuf(src)})
	return nil
}

func (b *gpuBackend) gather(dst, x, index *Tensor, dim int) error {
	defer unpin(pin(dst, x, index))
	k, err := wgsl.Gather(wlay(dst), wlay(x), dim, wlay(index), b.lim)
	b.run("Gather", k, err, map[string]*device.Buffer{"out": gbuf(dst), "x": gbuf(x), "index": gbuf(index)})
	return nil
}

func (b *gpuBackend) scatterAdd(dst, index, src *Tensor, dim int) error {
	defer unpin(pin(dst, index, src))
	p, err := wgsl.ScatterAdd(wgslType(dst.dtype), wlay(dst), dim, wlay(index), wlay(src), b.lim)
	b.runPlan("ScatterAdd", p, err, map[string]*device.Buffer{"dst": gbuf(dst), "index": gbuf(index), "src": gbuf(src)})
	return nil
}

func (b *gpuBackend) random(normal bool, dst *Tensor, seed, offset uint64, lo, hi float64) {
	defer unpin(pin(dst))
	dist := "uniform"
	if normal {
		dist = "normal"
	}
	k, err := wgsl.Philox(dist, wlay(dst), seed, offset, lo, hi, b.lim)
	b.run("random", k, err, map[string]*device.Buffer{"out": gbuf(dst)})
}

// wgslWindow is w as package wgsl's Window.
func wgslWindow(w window) wgsl.Window {
	return wgsl.Window(cpuWindow(w))
}

// wgslAttention returns a as package wgsl's AttentionShape for the
// contiguous operands at their offsets (g and res nil for the forward).
func wgslAttention(a attnShape, q, k, v, out, lse, seg, g, res *Tensor) wgsl.AttentionShape {
	s := wgsl.AttentionShape{N: a.n, H: a.h, D: a.d, MaxSpan: a.maxSpan, Scale: float32(a.scale), Causal: a.causal,
		Q: q.offset, K: k.offset, V: v.offset, Out: out.offset, LSE: lse.offset, Seg: seg.offset}
	if g != nil {
		s.G, s.Res = g.offset, res.offset
	}
	return s
}

func (b *gpuBackend) attention(out, lse, q, k, v, seg *Tensor, a attnShape) {
	defer unpin(pin(out, lse, q, k, v, seg))
	p, err := wgsl.AttentionForward(wgslAttention(a, q, k, v, out, lse, seg, nil, nil), b.lim)
	b.runPlan("ScaledDotProductAttention", p, err, map[string]*device.Buffer{
		"out": gbuf(out), "lse": gbuf(lse), "q": gbuf(q), "k": gbuf(k), "v": gbuf(v), "seg": gbuf(seg)})
}

func (b *gpuBackend) attentionBackward(res, q, k, v, out, lse, g, seg *Tensor, a attnShape) {
	defer unpin(pin(res, q, k, v, out, lse, g, seg))
	p, err := wgsl.AttentionBackward(wgslAttention(a, q, k, v, out, lse, seg, g, res), b.lim)
	b.runPlan("ScaledDotProductAttentionBackward", p, err, map[string]*device.Buffer{"res": gbuf(res),
		"out": gbuf(out), "lse": gbuf(lse), "q": gbuf(q), "k": gbuf(k), "v": gbuf(v), "g": gbuf(g), "seg": gbuf(seg)})
}

func (b *gpuBackend) unfold(dst, x *Tensor, w window, pad float64) {
	defer unpin(pin(dst, x))
	k, err := wgsl.Im2Col(wlay(dst), wlay(x), wgslWindow(w), float32(pad), b.lim)
	b.run("Unfold", k, err, map[string]*device.Buffer{"out": gbuf(dst), "x": gbuf(x)})
}

func (b *gpuBackend) fold(dst, cols *Tensor, w window) {
	defer unpin(pin(dst, cols))
	k, err := wgsl.Col2Im(wlay(dst), wlay(cols), wgslWindow(w), b.lim)
	b.run("Fold", k, err, map[string]*device.Buffer{"out": gbuf(dst), "cols": gbuf(cols)})
}
