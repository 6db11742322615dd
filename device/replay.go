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
// it again into a fresh encoder. Its Buffers are cmdLog.bufs[first:first+n]
// (nil where a side is not a caller's buffer, such as an upload's staging
// buffer); writes() says which of them it writes, the others it only
// reads. Every Buffer a command writes is also treated as read (in-place
// kernels read what they write).
//
// It is kept small (56 bytes), because Run appends one per dispatch: a
// dispatch keeps its pipeline and bind group and packs its workgroup
// counts and params offset into args; a copy or clear keeps in args[0]
// the index of its xferCmd in cmdLog.xfers.
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

// cmdLog is the open batch's command log, part of the stream: the
// commands in order, the Buffers they read and write, and their copies and
// clears. Guarded by GPU.mu, like every concern of the GPU: its methods
// are called with the lock held.
type cmdLog struct {
	cmds  []loggedCmd
	bufs  []*Buffer
	xfers []xferCmd
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

// dispatch logs a dispatch recorded by Run.
func (l *cmdLog) dispatch(label string, bindings []Binding, p *pipeline, bg *wgpu.BindGroup, dyn uint32, groups [3]uint32) {
	first := len(l.bufs)
	for _, bd := range bindings {
		l.bufs = append(l.bufs, bd.Buf)
	}
	l.cmds = append(l.cmds, loggedCmd{
		kind: cmdDispatch, n: uint8(len(bindings)), first: uint32(first), label: label, pipe: p, bg: bg,
		args: [2]uint64{uint64(groups[0]) | uint64(groups[1])<<32, uint64(groups[2]) | uint64(dyn)<<32},
	})
}

// copy logs a copy of size bytes from src to dst (raw buffers); srcBuf
// and dstBuf are the caller's Buffers behind them, nil for a staging
// buffer that is not one.
func (l *cmdLog) copy(label string, dst *wgpu.Buffer, dstBuf *Buffer, dstOff uint64, src *wgpu.Buffer, srcBuf *Buffer, srcOff, size uint64) {
	first := len(l.bufs)
	l.bufs = append(l.bufs, srcBuf, dstBuf)
	l.cmds = append(l.cmds, loggedCmd{kind: cmdCopy, n: 2, first: uint32(first), label: label, args: [2]uint64{uint64(len(l.xfers))}})
	l.xfers = append(l.xfers, xferCmd{src: src, dst: dst, srcOff: srcOff, dstOff: dstOff, size: size})
}

// clear logs a clear of size bytes of dst from off.
func (l *cmdLog) clear(dstBuf *Buffer, off, size uint64) {
	first := len(l.bufs)
	l.bufs = append(l.bufs, dstBuf)
	l.cmds = append(l.cmds, loggedCmd{kind: cmdClear, n: 1, first: uint32(first), label: "clear", args: [2]uint64{uint64(len(l.xfers))}})
	l.xfers = append(l.xfers, xferCmd{dst: dstBuf.blk.raw.(*wgpu.Buffer), dstOff: off, size: size})
}

// size gives the log room for a batch of cap commands (up to a bound),
// so that recording does not grow it. What is logged stays.
func (l *cmdLog) size(cap int) {
	n := min(cap, 4096)
	l.cmds = slices.Grow(l.cmds, max(n-len(l.cmds), 0))
	l.bufs = slices.Grow(l.bufs, max(4*n-len(l.bufs), 0))
}

// reset empties the log for the next batch, dropping its references.
func (l *cmdLog) reset() {
	clear(l.cmds)
	l.cmds = l.cmds[:0]
	clear(l.bufs)
	l.bufs = l.bufs[:0]
	clear(l.xfers)
	l.xfers = l.xfers[:0]
}

// buffers returns the Buffers that c reads and writes.
func (l *cmdLog) buffers(c *loggedCmd) []*Buffer { return l.bufs[c.first : c.first+uint32(c.n)] }

// replayLocked recovers the open batch after wgpu rejected it (cause): it
// uploads the batch's parameters, then records each logged command in
// order into its own encoder (a dispatch in its own compute pass). A
// command that fails validation marks the Buffers it writes failed; one
// that reads a failed Buffer is skipped and marks its written Buffers
// failed too; every other command is kept. It returns the command buffers
// to submit, in order. An error means that not even the replay could be
// prepared; then every Buffer the batch writes has been marked failed.
func (g *GPU) replayLocked(cause error) ([]*wgpu.CommandBuffer, error) {
	l := &g.stream.log
	g.stream.replays++
	if err := g.params.upload(g.queue); err != nil {
		err = fmt.Errorf("uploading the batch's parameters for its replay: %w (the batch failed with: %w)", err, cause)
		l.failAll(err)
		return nil, err
	}
	cmds := make([]*wgpu.CommandBuffer, 0, len(l.cmds))
	for i := range l.cmds {
		c := &l.cmds[i]
		bufs := l.buffers(c)
		if src := readsFailed(bufs); src != nil {
			c.markWrites(bufs, &CommandFailedError{Command: c.name(), Failed: src.Failed, Tainted: true, Err: src.Err})
			continue
		}
		cb, err := g.recordOneLocked(c)
		if err != nil {
			c.markWrites(bufs, &CommandFailedError{Command: c.name(), Failed: c.name(), Err: err})
			continue
		}
		cmds = append(cmds, cb)
	}
	return cmds, nil
}

// readsFailed returns the failure of the first failed Buffer in bufs.
// Callers hold GPU.mu.
func readsFailed(bufs []*Buffer) *CommandFailedError {
	for _, b := range bufs {
		if b != nil && b.failed != nil {
			return b.failed
		}
	}
	return nil
}

// markWrites marks the Buffers of bufs that c writes failed with e.
func (c *loggedCmd) markWrites(bufs []*Buffer, e *CommandFailedError) {
	for i, b := range bufs {
		if b != nil && c.writes()>>i&1 != 0 && b.failed == nil {
			b.failed = e
		}
	}
}

// failAll marks every Buffer the open batch writes failed with err: the
// fallback when the batch cannot even be replayed.
func (l *cmdLog) failAll(err error) {
	for i := range l.cmds {
		c := &l.cmds[i]
		c.markWrites(l.buffers(c), &CommandFailedError{Command: c.name(), Failed: "the batch", Err: err})
	}
}

// recordOneLocked records c alone into a fresh encoder and finishes it.
func (g *GPU) recordOneLocked(c *loggedCmd) (*wgpu.CommandBuffer, error) {
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
			g.params.bind(pass, uint32(c.args[1]>>32))
		}
		pass.DispatchWorkgroups(uint32(c.args[0]), uint32(c.args[0]>>32), uint32(c.args[1]))
		err = pass.End()
		pass.Release()
	case cmdCopy:
		x := &g.stream.log.xfers[c.args[0]]
		err = enc.CopyBufferToBuffer(x.src, x.srcOff, x.dst, x.dstOff, x.size)
	case cmdClear:
		x := &g.stream.log.xfers[c.args[0]]
		err = enc.ClearBuffer(x.dst, x.dstOff, x.size)
	default:
		err = errors.New("unknown logged command")
	}
	if err != nil {
		return nil, err
	}
	return enc.Finish(nil)
}
