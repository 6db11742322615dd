package data

import (
	"fmt"

	"github.com/tessera-ml/tessera/tensor"
)

// A Shard is one process's part of every epoch in data-parallel
// training (rank Rank of World processes), dealt as PyTorch's
// DistributedSampler deals it: the epoch's order (shuffled or not, the
// same on every rank, since it depends only on the seed and the epoch)
// is padded to a multiple of World by repeating its start, then dealt
// round-robin, rank r taking positions r, r+World, r+2·World, … Every
// rank gets Len(n) = ⌈n/World⌉ examples, and batch i of all the ranks
// together holds positions [i·b·World, (i+1)·b·World) of the padded
// order: World ranks with batch b see, step for step, the examples one
// process with batch World·b sees. The zero Shard (World 0) is the
// whole epoch, as is World 1.
type Shard struct {
	Rank, World int
}

// Len returns the examples of each epoch of n that the shard holds.
func (s Shard) Len(n int) int {
	if s.World <= 1 {
		return n
	}
	return (n + s.World - 1) / s.World
}

// Deal returns the shard's part of an epoch's order: for World ≤ 1 the
// order itself, else order padded to a multiple of World by repeating
// its start (cyclically, when World exceeds its length) and taken from
// position Rank in steps of World. It panics with a *tensor.Error
// wrapping ErrArgument for a rank outside 0..World-1, and returns nil
// for an empty order.
func (s Shard) Deal(order []int) []int {
	if err := s.check("Shard.Deal"); err != nil {
		panic(err)
	}
	if s.World <= 1 || len(order) == 0 {
		return order
	}
	out := make([]int, s.Len(len(order)))
	for i := range out {
		out[i] = order[(s.Rank+i*s.World)%len(order)]
	}
	return out
}

// check returns a *tensor.Error for op when s is not a rank of a world.
func (s Shard) check(op string) error {
	if s.World < 0 || (s.World > 0 && (s.Rank < 0 || s.Rank >= s.World)) || (s.World == 0 && s.Rank != 0) {
		return argErr(op, tensor.ErrArgument, "shard: rank %d of a world of %d (want 0 ≤ Rank < World)", s.Rank, s.World)
	}
	return nil
}

// of names the examples the shard holds of a dataset of n, for
// messages.
func (s Shard) of(n int) string {
	if s.World <= 1 {
		return fmt.Sprintf("the dataset's %d examples", n)
	}
	return fmt.Sprintf("the %d examples of rank %d's shard (of %d ranks) of the dataset's %d", s.Len(n), s.Rank, s.World, n)
}
