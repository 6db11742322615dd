package distributed

import (
	"math"
	"slices"

	"github.com/tessera-ml/tessera/tensor"
)

// maxCount is the most elements one rank's part of an AllGather or
// ReduceScatter may hold: MPI counts are C ints. AllReduce and Broadcast
// split larger tensors into several MPI calls.
const maxCount = math.MaxInt32

// AllReduce replaces t, on every rank, by the elementwise reduction of
// every rank's t (torch.distributed.all_reduce): the sum, the mean (float
// dtypes only), the maximum or the minimum. t may be any shape, dtype
// float32, float64 or int32, on any device, a view included (not an
// expanded one); every rank must pass the same shape and dtype. The
// write is not recorded by autograd. In a world of one, t is left as it
// is. It returns an *Error (see the package doc); it does not panic.
//
// Every rank gets the same bits: Open MPI's all-reduce algorithms (ring,
// recursive doubling, reduce then broadcast) combine the partial results
// in one order for all ranks, up to the commutativity of each step. MPI
// itself does not promise it; the np=2 tests check it on sums that round.
func (g *Group) AllReduce(t *tensor.Tensor, op ReduceOp) error {
	return g.AllReduceAsync(t, op).Wait()
}

// AllReduceAsync starts AllReduce and returns at once: t is read now (a
// GPU tensor is read back to host memory), reduced on the group's worker
// while the caller goes on, and written when Wait returns. Until then t
// must not be read for the result; changes made to it meanwhile are
// overwritten by Wait.
func (g *Group) AllReduceAsync(t *tensor.Tensor, op ReduceOp) *Work {
	c := g.newCall(opAllReduce, int64(op), t)
	c.checkReduce(op)
	c.checkWritable()
	w := &Work{out: t}
	if g.size == 1 {
		w.job = c.issue(nil)
		return w
	}
	buf := c.read()
	w.job = c.issue(func(tr transport) error {
		if err := tr.allReduce(buf, op.base()); err != nil {
			return err
		}
		if op == Mean {
			buf.divide(g.size)
		}
		return nil
	})
	w.finish = func() error {
		defer g.pool.put(buf)
		return c.write(buf)
	}
	return w
}

// Broadcast copies root's t into t on every other rank
// (torch.distributed.broadcast). The ranks must pass the same shape and
// dtype; root's t is not written. Non-root ranks need not read their t,
// so a GPU tensor there costs one upload and no readback. In a world of
// one it checks its arguments and leaves t as it is.
func (g *Group) Broadcast(t *tensor.Tensor, root int) error {
	return g.BroadcastAsync(t, root).Wait()
}

// BroadcastAsync starts Broadcast: root's t is read now, the other ranks'
// t are written when Wait returns.
func (g *Group) BroadcastAsync(t *tensor.Tensor, root int) *Work {
	c := g.newCall(opBroadcast, int64(root), t)
	if root < 0 || root >= g.size {
		c.fail(ErrArgument, "root %d is not a rank of a group of %d", root, g.size)
	}
	if g.rank != root {
		c.checkWritable()
	}
	w := &Work{out: t}
	if g.size == 1 {
		w.job = c.issue(nil)
		return w
	}
	var buf hostBuf
	switch {
	case g.rank == root:
		buf = c.read()
	case c.err == nil:
		buf = g.pool.get(c.hostKind(), c.numel)
	}
	w.job = c.issue(func(tr transport) error { return tr.broadcast(buf, root) })
	w.finish = func() error {
		defer g.pool.put(buf)
		if g.rank == root {
			return nil
		}
		return c.write(buf)
	}
	return w
}

// AllGather returns, on every rank, every rank's t concatenated along
// dim 0 in rank order (torch.distributed.all_gather_into_tensor): for t
// of shape [n, d...] the result has shape [Size·n, d...], rank r's t at
// rows r·n to (r+1)·n; a 0-d t gives shape [Size]. To stack along a new
// first dim instead, View the result as [Size, n, d...]. The result is a
// new tensor with t's dtype, device and context (made when the
// collective ends, so it joins the Scope open then). Every rank must
// pass the same shape and dtype.
func (g *Group) AllGather(t *tensor.Tensor) (*tensor.Tensor, error) {
	w := g.AllGatherAsync(t)
	err := w.Wait()
	return w.Result(), err
}

// AllGatherAsync starts AllGather; Wait makes the result, which Result
// returns.
func (g *Group) AllGatherAsync(t *tensor.Tensor) *Work {
	c := g.newCall(opAllGather, 0, t)
	if c.err == nil && c.numel > maxCount {
		c.fail(ErrArgument, "%d elements per rank: MPI_Allgather counts at most %d", c.numel, maxCount)
	}
	host := c.read()
	var buf hostBuf
	if c.err == nil {
		buf = g.pool.get(c.hostKind(), g.size*c.numel)
		buf.slice(g.rank*c.numel, (g.rank+1)*c.numel).copyFrom(host)
		g.pool.put(host)
	}
	w := &Work{}
	w.job = c.issue(func(tr transport) error { return tr.allGather(buf) })
	w.finish = func() error {
		defer g.pool.put(buf)
		shape := []int{g.size}
		if len(c.shape) > 0 {
			shape = slices.Clone(c.shape)
			shape[0] *= g.size
		}
		out, err := c.make(buf, shape)
		w.out = out
		return err
	}
	return w
}

// ReduceScatter reduces t elementwise across the ranks, as AllReduce
// does, and returns to rank r only its part: t, of shape [Size·n, d...],
// is split along dim 0 into Size parts of shape [n, d...], and rank r
// gets the reduction of part r (torch.distributed.reduce_scatter_tensor).
// t must have at least one dim, and dim 0 must be a multiple of Size.
// The result is a new tensor like t (see AllGather).
func (g *Group) ReduceScatter(t *tensor.Tensor, op ReduceOp) (*tensor.Tensor, error) {
	w := g.ReduceScatterAsync(t, op)
	err := w.Wait()
	return w.Result(), err
}

// ReduceScatterAsync starts ReduceScatter; Wait makes the result, which
// Result returns.
func (g *Group) ReduceScatterAsync(t *tensor.Tensor, op ReduceOp) *Work {
	c := g.newCall(opReduceScatter, int64(op), t)
	c.checkReduce(op)
	switch {
	case c.err != nil:
	case len(c.shape) == 0:
		c.fail(ErrArgument, "a 0-d tensor cannot be split across %d ranks", g.size)
	case c.shape[0]%g.size != 0:
		c.fail(ErrArgument, "dim 0 of %v is not a multiple of the group's size %d", c.shape, g.size)
	case c.numel/g.size > maxCount:
		c.fail(ErrArgument, "%d elements per rank: MPI_Reduce_scatter_block counts at most %d", c.numel/g.size, maxCount)
	}
	buf := c.read()
	part := c.numel / g.size
	w := &Work{}
	w.job = c.issue(func(tr transport) error {
		if err := tr.reduceScatter(buf, op.base()); err != nil {
			return err
		}
		if op == Mean {
			buf.slice(0, part).divide(g.size)
		}
		return nil
	})
	w.finish = func() error {
		defer g.pool.put(buf)
		shape := slices.Clone(c.shape)
		shape[0] /= g.size
		out, err := c.make(buf.slice(0, part), shape)
		w.out = out
		return err
	}
	return w
}

// Barrier returns once every rank has called it.
func (g *Group) Barrier() error {
	c := g.newCall(opBarrier, 0, nil)
	w := &Work{job: c.issue(func(tr transport) error { return tr.barrier() })}
	return w.Wait()
}
