//go:build cgo

package device

import (
	"errors"
	"fmt"
	"slices"

	"github.com/rajveermalviya/go-webgpu/wgpu"
)

// The open batch's command log and its replay (see "A failed batch never
// loses work silently" in the package doc). Recording a command appends
// one loggedCmd and its Buffers; nothing else happens on the normal path.

type cmdKind uint8

const (
	cmdDispatch cmdKind = iota
	cmdCopy
	cmdClear
)

// loggedCmd is one recorded command of the open batch, enough to record
// it again into a fresh encoder. Its Buffers are logBufs[first:first+n]
// (nil where a side is not a caller's buffer, such as an upload's staging
// buffer); writes() says which of them it writes, the others it only
// reads. Every Buffer a command writes is also treated as read (in-place
// kernels read what they write).
//
// It is kept small (56 bytes), because Run appends one per dispatch: a
// dispatch keeps its pipeline and bind group and packs its workgroup
// counts and params offset into args; a copy or clear keeps in args[0]
// the index of its xferCmd.
type loggedCmd struct {
	kind  cmdKind
	n     uint8
	first uint32
	label string // Kernel.Label, or the transfer's name
	pipe  *pipeline
	bg    *wgpu.BindGroup
	args  [2]uint64
}

// xferCmd is a logged copy (src to dst) or clear (dst).
type xferCmd struct {
	src, dst       *wgpu.Buffer
	srcOff, dstOff uint64
	size           uint64
}

// writes returns the mask of the command's Buffers that it writes: a
// dispatch's read_write bindings, a copy's destination, a clear's buffer.
func (c *loggedCmd) writes() uint64 {
	switch c.kind {
	case cmdDispatch:
		return c.pipe.sig.writable
	case cmdCopy:
		return 0b10
	}
	return 1
}

// name is how errors name the command.
func (c *loggedCmd) name() string {
	switch {
	case c.label != "":
		return c.label
	case c.kind == cmdDispatch:
		return fmt.Sprintf("kernel %s (bindings %s)", c.pipe.entry, c.pipe.sig)
	case c.kind == cmdClear:
		return "clear"
	}
	return "copy"
}

// logDispatch logs a dispatch recorded by Run.
func (g *GPU) logDispatch(label string, bindings []Binding, p *pipeline, bg *wgpu.BindGroup, dyn uint32, groups [3]uint32) {
	first := len(g.logBufs)
	for _, bd := range bindings {
		g.logBufs = append(g.logBufs, bd.Buf)
	}
	g.log = append(g.log, loggedCmd{
		kind: cmdDispatch, n: uint8(len(bindings)), first: uint32(first), label: label, pipe: p, bg: bg,
		args: [2]uint64{uint64(groups[0]) | uint64(groups[1])<<32, uint64(groups[2]) | uint64(dyn)<<32},
	})
}

// logCopy logs a copy of size bytes from src to dst (raw buffers); srcBuf
// and dstBuf are the caller's Buffers behind them, nil for a staging
// buffer that is not one.
func (g *GPU) logCopy(label string, dst *wgpu.Buffer, dstBuf *Buffer, dstOff uint64, src *wgpu.Buffer, srcBuf *Buffer, srcOff, size uint64) {
	first := len(g.logBufs)
	g.logBufs = append(g.logBufs, srcBuf, dstBuf)
	g.log = append(g.log, loggedCmd{kind: cmdCopy, n: 2, first: uint32(first), label: label, args: [2]uint64{uint64(len(g.logXfers))}})
	g.logXfers = append(g.logXfers, xferCmd{src: src, dst: dst, srcOff: srcOff, dstOff: dstOff, size: size})
}

// logClear logs a clear of size bytes of dst from off.
func (g *GPU) logClear(dstBuf *Buffer, off, size uint64) {
	first := len(g.logBufs)
	g.logBufs = append(g.logBufs, dstBuf)
	g.log = append(g.log, loggedCmd{kind: cmdClear, n: 1, first: uint32(first), label: "clear", args: [2]uint64{uint64(len(g.logXfers))}})
	g.logXfers = append(g.logXfers, xferCmd{dst: dstBuf.blk.raw.(*wgpu.Buffer), dstOff: off, size: size})
}

// sizeLog gives the log room for a batch of cap commands (up to a bound),
// so that recording does not grow it. What is logged stays.
func (g *GPU) sizeLog(cap int) {
	n := min(cap, 4096)
	g.log = slices.Grow(g.log, max(n-len(g.log), 0))
	g.logBufs = slices.Grow(g.logBufs, max(4*n-len(g.logBufs), 0))
}

// resetLog empties the log for the next batch, dropping its references.
func (g *GPU) resetLog() {
	clear(g.log)
	g.log = g.log[:0]
	clear(g.logBufs)
	g.logBufs = g.logBufs[:0]
	clear(g.logXfers)
	g.logXfers = g.logXfers[:0]
}

// replayLocked recovers the open batch after wgpu rejected it (cause): it
// uploads the batch's parameters, then records each logged command in
// order into its own encoder (a dispatch in its own compute pass). A
// command that fails validation marks the Buffers it writes failed; one
// that reads a failed Buffer is skipped and marks its written Buffers
// failed too; every other command is kept. It returns the command buffers
// to submit, in order. An error means that not even the replay could be
// prepared; then every Buffer the batch writes has been marked failed.
func (g *GPU) replayLocked(cause error) ([]*wgpu.CommandBuffer, error) {
	g.replays++
	if g.slot != nil && len(g.arena) > 0 {
		if err := g.queue.WriteBuffer(g.slot.buf, 0, g.arena); err != nil {
			err = fmt.Errorf("uploading the batch's parameters for its replay: %w (the batch failed with: %w)", err, cause)
			g.failAll(err)
			return nil, err
		}
	}
	cmds := make([]*wgpu.CommandBuffer, 0, len(g.log))
	for i := range g.log {
		c := &g.log[i]
		bufs := g.logBufs[c.first : c.first+uint32(c.n)]
		if src := readsFailed(bufs); src != nil {
			g.markWrites(c, bufs, &CommandFailedError{Command: c.name(), Failed: src.Failed, Tainted: true, Err: src.Err})
			continue
		}
		cb, err := g.recordOne(c)
		if err != nil {
			g.markWrites(c, bufs, &CommandFailedError{Command: c.name(), Failed: c.name(), Err: err})
			continue
		}
		cmds = append(cmds, cb)
	}
	return cmds, nil
}

// readsFailed returns the failure of the first failed Buffer in bufs.
func readsFailed(bufs []*Buffer) *CommandFailedError {
	for _, b := range bufs {
		if b != nil && b.failed != nil {
			return b.failed
		}
	}
	return nil
}

// markWrites marks the Buffers that c writes failed with e.
func (g *GPU) markWrites(c *loggedCmd, bufs []*Buffer, e *CommandFailedError) {
	for i, b := range bufs {
		if b != nil && c.writes()>>i&1 != 0 && b.failed == nil {
			b.failed = e
		}
	}
}

// failAll marks every Buffer the open batch writes failed with err: the
// fallback when the batch cannot even be replayed.
func (g *GPU) failAll(err error) {
	for i := range g.log {
		c := &g.log[i]
		g.markWrites(c, g.logBufs[c.first:c.first+uint32(c.n)], &CommandFailedError{Command: c.name(), Failed: "the batch", Err: err})
	}
}

// recordOne records c alone into a fresh encoder and finishes it.
func (g *GPU) recordOne(c *loggedCmd) (*wgpu.CommandBuffer, error) {
	enc, err := g.dev.CreateCommandEncoder(nil)
	if err != nil {
		return nil, err
	}
	defer enc.Release()
	switch c.kind {
	case cmdDispatch:
		pass := enc.BeginComputePass(nil)
		pass.SetPipeline(c.pipe.pipe)
		pass.SetBindGroup(0, c.bg, nil)
		if c.pipe.sig.params {
			g.dyn[0] = uint32(c.args[1] >> 32)
			pass.SetBindGroup(1, g.slot.bg, g.dyn[:])
		}
		pass.DispatchWorkgroups(uint32(c.args[0]), uint32(c.args[0]>>32), uint32(c.args[1]))
		err = pass.End()
		pass.Release()
	case cmdCopy:
		x := &g.logXfers[c.args[0]]
		err = enc.CopyBufferToBuffer(x.src, x.srcOff, x.dst, x.dstOff, x.size)
	case cmdClear:
		x := &g.logXfers[c.args[0]]
		err = enc.ClearBuffer(x.dst, x.dstOff, x.size)
	default:
		err = errors.New("unknown logged command")
	}
	if err != nil {
		return nil, err
	}
	return enc.Finish(nil)
}
