//go:build cgo

package device

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/rajveermalviya/go-webgpu/wgpu"
)

// submission is one submitted batch, retired when its work-done callback
// fired. Everything that its commands reference but that the allocator does
// not own (upload staging buffers, the params slot) is released or pooled
// only then.
type submission struct {
	batch   uint64
	index   wgpu.SubmissionIndex
	done    atomic.Bool
	release []*wgpu.Buffer
	slot    *paramsSlot
}

// encoder returns the open command encoder, creating it.
func (g *GPU) encoder() (*wgpu.CommandEncoder, error) {
	if g.enc == nil {
		enc, err := g.dev.CreateCommandEncoder(nil)
		if err != nil {
			return nil, fmt.Errorf("tessera: creating a command encoder: %w", err)
		}
		g.enc = enc
	}
	return g.enc, nil
}

// computePass returns the open compute pass, beginning one.
func (g *GPU) computePass() (*wgpu.ComputePassEncoder, error) {
	if g.pass == nil {
		enc, err := g.encoder()
		if err != nil {
			return nil, err
		}
		g.pass = enc.BeginComputePass(nil)
	}
	return g.pass, nil
}

// copyEncoder ends the open compute pass (copies and clears are recorded on
// the encoder between passes) and returns the encoder. If wgpu rejected the
// pass, the encoder is invalid: the batch is replayed and submitted at once
// (flushLocked) and a fresh encoder returned. The replay may mark buffers
// failed, so callers check theirs (checkFailed) after this call.
func (g *GPU) copyEncoder() (*wgpu.CommandEncoder, error) {
	g.endPass()
	if g.batchErr != nil {
		if err := g.flushLocked(); err != nil {
			return nil, err
		}
	}
	return g.encoder()
}

// endPass ends the open compute pass. wgpu validates the pass's commands
// here; a failure invalidates the encoder, and flushLocked replays the
// batch.
func (g *GPU) endPass() {
	if g.pass == nil {
		return
	}
	if err := g.pass.End(); err != nil && g.batchErr == nil {
		g.batchErr = err
	}
	g.pass.Release()
	g.pass = nil
}

// encoderFailed handles a transfer command that wgpu rejected as it was
// recorded (it is logged already): the encoder is now invalid, so the batch
// is replayed and submitted at once, which marks what the command writes
// failed, and the command's error is returned.
func (g *GPU) encoderFailed(what string, err error) error {
	if g.batchErr == nil {
		g.batchErr = err
	}
	if ferr := g.flushLocked(); ferr != nil {
		return ferr
	}
	return fmt.Errorf("tessera: %s: %w", what, err)
}

// countCmd counts one recorded command and submits the batch at the cap.
func (g *GPU) countCmd() error {
	g.nCmds++
	if g.nCmds >= g.batchCap {
		return g.flushLocked()
	}
	return nil
}

// flushLocked submits the open batch: it ends the pass, uploads the batch's
// parameter arena (queue.WriteBuffer runs before the batch's commands, as it
// must), submits, opens the next batch (from then on, blocks the submitted
// batch references take the queue.WriteBuffer upload path again) and
// throttles to MaxInFlight submissions in flight.
//
// When wgpu rejected the batch (at a pass's End, when a transfer was
// recorded, or at Finish), submitting it would abort the process, so the
// batch is replayed instead (replayLocked): every command that validates
// is submitted, in order, and the buffers that the failed commands would
// have written are marked failed. That is not an error of the flush: the
// failure is reported by whatever later uses those buffers. An error is
// returned only when the replay itself could not be prepared; then every
// buffer the batch writes is marked failed and nothing of it ran.
func (g *GPU) flushLocked() error {
	if g.enc == nil {
		g.pollLocked()
		return nil
	}
	g.endPass()
	sub := &submission{batch: g.batch, release: g.batchRelease, slot: g.slot}
	err := g.batchErr
	var cmd *wgpu.CommandBuffer
	if err == nil {
		cmd, err = g.enc.Finish(nil)
	}
	g.enc.Release()
	g.enc = nil
	var one [1]*wgpu.CommandBuffer
	var cmds []*wgpu.CommandBuffer
	switch {
	case err == nil:
		one[0] = cmd
		cmds = one[:]
		if sub.slot != nil && len(g.arena) > 0 {
			if err = g.queue.WriteBuffer(sub.slot.buf, 0, g.arena); err != nil {
				cmd.Release()
				g.failAll(err)
			}
		}
	default:
		cmds, err = g.replayLocked(err)
	}
	g.resetLog()
	g.batchRelease, g.slot, g.batchErr = nil, nil, nil
	g.arena = g.arena[:0]
	g.batch++
	g.nCmds = 0
	if err != nil {
		// Nothing of the batch reached the queue; what it writes is
		// marked failed.
		sub.done.Store(true)
		g.inflight = append(g.inflight, sub)
		g.alloc.flushed()
		g.retireDone()
		return fmt.Errorf("tessera: recorded GPU work could not be submitted (what it writes is marked failed): %w", err)
	}
	sub.index = g.queue.Submit(cmds...)
	for _, c := range cmds {
		c.Release()
	}
	g.lastIndex = sub.index
	g.submits++
	onSubmittedWorkDone(g.queue, func(wgpu.QueueWorkDoneStatus) { sub.done.Store(true) })
	g.inflight = append(g.inflight, sub)
	g.alloc.flushed()
	g.trimBindGroups()
	g.pollLocked()
	for len(g.inflight) > g.opts.MaxInFlight {
		if err := g.waitLocked(g.inflight[0]); err != nil {
			return err
		}
	}
	return nil
}

// pollLocked lets wgpu process finished work without blocking and retires
// finished submissions.
func (g *GPU) pollLocked() {
	if len(g.inflight) == 0 {
		return
	}
	g.dev.Poll(false, nil)
	g.retireDone()
}

// retireDone retires finished submissions in order.
func (g *GPU) retireDone() {
	n := 0
	for n < len(g.inflight) && g.inflight[n].done.Load() {
		s := g.inflight[n]
		for _, b := range s.release {
			b.Release()
		}
		if s.slot != nil {
			g.slots = append(g.slots, s.slot)
		}
		g.completed = s.batch
		g.inflight[n] = nil
		n++
	}
	if n > 0 {
		g.inflight = append(g.inflight[:0], g.inflight[n:]...)
		g.alloc.retired(g.completed)
	}
}

// waitLocked waits until s finished. A blocking poll in this wgpu version
// may return after ~5 s with work still running (gfx-rs/wgpu#4589), so it
// loops on the work-done callback until Options.Timeout.
func (g *GPU) waitLocked(s *submission) error {
	deadline := time.Now().Add(g.opts.Timeout)
	for !s.done.Load() {
		if err := g.usable(); err != nil {
			return err
		}
		g.dev.Poll(true, &wgpu.WrappedSubmissionIndex{Queue: g.queue, SubmissionIndex: s.index})
		if s.done.Load() {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: submitted GPU work did not finish within %v", ErrTimeout, g.opts.Timeout)
		}
	}
	g.retireDone()
	return nil
}

// syncLocked submits the open batch and waits for all submitted work.
func (g *GPU) syncLocked() error {
	err := g.flushLocked()
	for len(g.inflight) > 0 {
		if werr := g.waitLocked(g.inflight[0]); werr != nil {
			return werr
		}
	}
	return err
}

// Flush submits the recorded work without waiting for it.
func (g *GPU) Flush() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.usable(); err != nil {
		return err
	}
	return g.flushLocked()
}

// Sync submits the recorded work and waits until all submitted work
// finished.
func (g *GPU) Sync() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.usable(); err != nil {
		return err
	}
	return g.syncLocked()
}

// SetBatchCap sets the number of recorded commands per submission; n <= 0
// restores DefaultBatchCap (or Options.BatchCap).
func (g *GPU) SetBatchCap(n int) {
	if n <= 0 {
		n = g.opts.BatchCap
	}
	g.mu.Lock()
	g.batchCap = n
	g.sizeLog(n)
	g.mu.Unlock()
}
