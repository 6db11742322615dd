//go:build cgo

package device

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/rajveermalviya/go-webgpu/wgpu"
)

// stream is the GPU's one command stream, through which every operation
// is ordered: the open batch (one command encoder and compute pass that
// record dispatches, copies and clears), its id, size and validation
// error, the upload staging buffers and the replay log of its commands,
// and the submissions in flight. Batches are numbered from 1; every batch
// <= completed has finished. Guarded by GPU.mu, like every concern of the
// GPU: its methods are called with the lock held.
type stream struct {
	enc       *wgpu.CommandEncoder
	pass      *wgpu.ComputePassEncoder
	batch     uint64         // id of the open batch
	nCmds     int            // commands recorded in the open batch
	cap       int            // commands per batch (SetBatchCap)
	err       error          // validation error that dooms the open batch
	uploads   []*wgpu.Buffer // upload staging buffers of the open batch
	log       cmdLog         // the open batch's commands, for replay (replay.go)
	fault     func(Kernel) bool
	inflight  []*submission // submitted batches not yet retired, in order
	completed uint64        // every batch <= completed has finished
	lastIndex wgpu.SubmissionIndex

	dispatches, submits, replays int64
}

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

// init opens batch 1 with room in the log for batchCap commands.
func (s *stream) init(batchCap int) {
	s.batch, s.cap = 1, batchCap
	s.log.size(batchCap)
}

// encoder returns the open command encoder, creating it.
func (s *stream) encoder(dev *wgpu.Device) (*wgpu.CommandEncoder, error) {
	if s.enc == nil {
		enc, err := dev.CreateCommandEncoder(nil)
		if err != nil {
			return nil, fmt.Errorf("tessera: creating a command encoder: %w", err)
		}
		s.enc = enc
	}
	return s.enc, nil
}

// computePass returns the open compute pass, beginning one.
func (s *stream) computePass(dev *wgpu.Device) (*wgpu.ComputePassEncoder, error) {
	if s.pass == nil {
		enc, err := s.encoder(dev)
		if err != nil {
			return nil, err
		}
		s.pass = enc.BeginComputePass(nil)
	}
	return s.pass, nil
}

// endPass ends the open compute pass. wgpu validates the pass's commands
// here; a failure invalidates the encoder, and the flush replays the
// batch.
func (s *stream) endPass() {
	if s.pass == nil {
		return
	}
	if err := s.pass.End(); err != nil {
		s.fail(err)
	}
	s.pass.Release()
	s.pass = nil
}

// fail records that wgpu rejected the open batch (the first error counts).
func (s *stream) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// next opens the next batch after the open one was submitted or dropped.
func (s *stream) next() {
	s.log.reset()
	s.uploads, s.err = nil, nil
	s.batch++
	s.nCmds = 0
}

// release releases the open pass, encoder and upload staging buffers
// (Close, after all work finished).
func (s *stream) release() {
	if s.pass != nil {
		s.pass.Release()
		s.pass = nil
	}
	if s.enc != nil {
		s.enc.Release()
		s.enc = nil
	}
	for _, b := range s.uploads {
		b.Release()
	}
	s.uploads = nil
}

// copyEncoderLocked ends the open compute pass (copies and clears are
// recorded on the encoder between passes) and returns the encoder. If wgpu
// rejected the pass, the encoder is invalid: the batch is replayed and
// submitted at once (flushLocked) and a fresh encoder returned. The replay
// may mark buffers failed, so callers check theirs (checkFailedLocked)
// after this call.
func (g *GPU) copyEncoderLocked() (*wgpu.CommandEncoder, error) {
	g.stream.endPass()
	if g.stream.err != nil {
		if err := g.flushLocked(); err != nil {
			return nil, err
		}
	}
	return g.stream.encoder(g.dev)
}

// encoderFailedLocked handles a transfer command that wgpu rejected as it
// was recorded (it is logged already): the encoder is now invalid, so the
// batch is replayed and submitted at once, which marks what the command
// writes failed, and the command's error is returned.
func (g *GPU) encoderFailedLocked(what string, err error) error {
	g.stream.fail(err)
	if ferr := g.flushLocked(); ferr != nil {
		return ferr
	}
	return fmt.Errorf("tessera: %s: %w", what, err)
}

// countCmdLocked counts one recorded command and submits the batch at the
// cap.
func (g *GPU) countCmdLocked() error {
	g.stream.nCmds++
	if g.stream.nCmds >= g.stream.cap {
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
	s := &g.stream
	if s.enc == nil {
		g.pollLocked()
		return nil
	}
	s.endPass()
	sub := &submission{batch: s.batch, release: s.uploads, slot: g.params.slot}
	err := s.err
	var cmd *wgpu.CommandBuffer
	if err == nil {
		cmd, err = s.enc.Finish(nil)
	}
	s.enc.Release()
	s.enc = nil
	var one [1]*wgpu.CommandBuffer
	var cmds []*wgpu.CommandBuffer
	switch {
	case err == nil:
		one[0] = cmd
		cmds = one[:]
		if err = g.params.upload(g.queue); err != nil {
			cmd.Release()
			s.log.failAll(err)
		}
	default:
		cmds, err = g.replayLocked(err)
	}
	g.params.detach()
	s.next()
	if err != nil {
		// Nothing of the batch reached the queue; what it writes is
		// marked failed.
		sub.done.Store(true)
		s.inflight = append(s.inflight, sub)
		g.alloc.flushed()
		g.retireLocked()
		return fmt.Errorf("tessera: recorded GPU work could not be submitted (what it writes is marked failed): %w", err)
	}
	sub.index = g.queue.Submit(cmds...)
	for _, c := range cmds {
		c.Release()
	}
	s.lastIndex = sub.index
	s.submits++
	onSubmittedWorkDone(g.queue, func(wgpu.QueueWorkDoneStatus) { sub.done.Store(true) })
	s.inflight = append(s.inflight, sub)
	g.alloc.flushed()
	g.binds.trim()
	g.pollLocked()
	for len(s.inflight) > g.opts.MaxInFlight {
		if err := g.waitLocked(s.inflight[0]); err != nil {
			return err
		}
	}
	return nil
}

// pollLocked lets wgpu process finished work without blocking and retires
// finished submissions.
func (g *GPU) pollLocked() {
	if len(g.stream.inflight) == 0 {
		return
	}
	g.dev.Poll(false, nil)
	g.retireLocked()
}

// retireLocked retires finished submissions in order: it releases their
// upload staging buffers, pools their params buffers and tells the
// allocator which batch completed.
func (g *GPU) retireLocked() {
	s := &g.stream
	n := 0
	for n < len(s.inflight) && s.inflight[n].done.Load() {
		sub := s.inflight[n]
		for _, b := range sub.release {
			b.Release()
		}
		g.params.recycle(sub.slot)
		s.completed = sub.batch
		s.inflight[n] = nil
		n++
	}
	if n > 0 {
		s.inflight = append(s.inflight[:0], s.inflight[n:]...)
		g.alloc.retired(s.completed)
	}
}

// waitLocked waits until sub finished, up to Options.Timeout.
func (g *GPU) waitLocked(sub *submission) error {
	if err := g.pollUntilLocked(sub.done.Load); err != nil {
		return fmt.Errorf("%w (waiting for submitted GPU work)", err)
	}
	g.retireLocked()
	return nil
}

// pollUntilLocked polls the device without blocking until done reports
// true, sleeping between polls (a short spin first, then up to
// maxPollSleep), and gives ErrTimeout after Options.Timeout or the
// device's error when it is lost.
//
// It never blocks in wgpu: a blocking poll in wgpu-core 0.17 waits on
// the fence for at most 5 s and then takes the submission it waited for
// as finished whether or not it is (Device::maintain sets
// last_done_index to the index it waited for), so its work-done callback
// fires, its buffers are freed and reused while the GPU still runs it,
// and lavapipe crashes the process (gfx-rs/wgpu#4589: one 3072×3072
// MatMul did it). A non-blocking poll reads the fence's real value.
func (g *GPU) pollUntilLocked(done func() bool) error {
	deadline := time.Now().Add(g.opts.Timeout)
	sleep := time.Duration(0)
	for {
		g.dev.Poll(false, nil)
		if done() {
			return nil
		}
		if err := g.usableLocked(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: not finished within %v", ErrTimeout, g.opts.Timeout)
		}
		switch {
		case sleep == 0:
			sleep = time.Microsecond
			runtime.Gosched()
			continue
		case sleep < maxPollSleep:
			sleep = min(2*sleep, maxPollSleep)
		}
		time.Sleep(sleep)
	}
}

// maxPollSleep bounds the sleep between two polls of a wait: the latency
// a wait adds after the work finished.
const maxPollSleep = 500 * time.Microsecond

// syncLocked submits the open batch and waits for all submitted work.
func (g *GPU) syncLocked() error {
	err := g.flushLocked()
	for len(g.stream.inflight) > 0 {
		if werr := g.waitLocked(g.stream.inflight[0]); werr != nil {
			return werr
		}
	}
	return err
}

// Flush submits the recorded work without waiting for it.
func (g *GPU) Flush() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.usableLocked(); err != nil {
		return err
	}
	return g.flushLocked()
}

// Sync submits the recorded work and waits until all submitted work
// finished.
func (g *GPU) Sync() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.usableLocked(); err != nil {
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
	g.stream.cap = n
	g.stream.log.size(n)
	g.mu.Unlock()
}

// DispatchCount returns the number of dispatches recorded so far.
func (g *GPU) DispatchCount() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stream.dispatches
}

// SubmitCount returns the number of submissions so far.
func (g *GPU) SubmitCount() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stream.submits
}

// ReplayCount returns the number of batches that failed validation and
// were replayed command by command (see the package doc). Valid work never
// needs a replay, so tests of valid work expect it unchanged.
func (g *GPU) ReplayCount() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stream.replays
}

// InjectFaultForTesting is for tests only: from now on, every dispatch
// for which match returns true is recorded with a workgroup count above
// the device's limit, bypassing Run's own check, so that wgpu rejects the
// batch when the compute pass ends, exactly as it rejects a real invalid
// dispatch. nil stops it. Tests use it to exercise the replay of a failed
// batch.
func (g *GPU) InjectFaultForTesting(match func(Kernel) bool) {
	g.mu.Lock()
	g.stream.fault = match
	g.mu.Unlock()
}
