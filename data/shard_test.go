package data

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/tensor"
)

// dealTorch deals an order as torch.utils.data.DistributedSampler does
// (drop_last False): indices += (indices * ceil(padding/len))[:padding],
// then indices[rank:total:world].
func dealTorch(order []int, rank, world int) []int {
	total := (len(order) + world - 1) / world * world
	padded := slices.Clone(order)
	for len(padded) < total {
		padded = append(padded, order[:min(len(order), total-len(padded))]...)
	}
	var out []int
	for i := rank; i < total; i += world {
		out = append(out, padded[i])
	}
	return out
}

func TestShardDealsAsDistributedSampler(t *testing.T) {
	for _, n := range []int{1, 2, 5, 7, 10, 33} {
		order := Permutation(3, 1, n)
		for _, world := range []int{1, 2, 3, 4, 8, 40} {
			covered := map[int]bool{}
			for rank := range world {
				got := Shard{Rank: rank, World: world}.Deal(order)
				if want := dealTorch(order, rank, world); !slices.Equal(got, want) {
					t.Fatalf("n %d, rank %d of %d: %v, want %v", n, rank, world, got, want)
				}
				if len(got) != (Shard{Rank: rank, World: world}).Len(n) {
					t.Fatalf("n %d, rank %d of %d: %d examples, Len says %d", n, rank, world, len(got), Shard{World: world}.Len(n))
				}
				for _, i := range got {
					covered[i] = true
				}
			}
			if len(covered) != n {
				t.Fatalf("n %d, world %d: the shards cover %d examples", n, world, len(covered))
			}
		}
	}
	if got := (Shard{}).Deal([]int{4, 2}); !slices.Equal(got, []int{4, 2}) {
		t.Errorf("the zero Shard dealt %v", got)
	}
}

// Two ranks with batch b see, batch for batch, the examples one process
// with batch 2b sees, in every epoch, shuffled or not.
func TestShardedLoadersSplitTheGlobalBatch(t *testing.T) {
	const n, b, world = 20, 3, 2
	ds := numbered(t, n, 2)
	for _, shuffle := range []bool{false, true} {
		whole := take(t, newLoader(t, ds, Config{BatchSize: world * b, Shuffle: shuffle, Seed: 11}), 8, 2)
		var ranks [world][]*record
		for r := range world {
			ranks[r] = take(t, newLoader(t, ds, Config{BatchSize: b, Shuffle: shuffle, Seed: 11, Shard: Shard{Rank: r, World: world}}), 8, 2)
		}
		for step, w := range whole {
			if w == nil {
				for r := range world {
					if ranks[r][step] != nil {
						t.Fatalf("shuffle %v, step %d: the whole loader ended its epoch, rank %d did not", shuffle, step, r)
					}
				}
				continue
			}
			var union []int
			for r := range world {
				if ranks[r][step] == nil {
					t.Fatalf("shuffle %v, step %d: rank %d ended its epoch early", shuffle, step, r)
				}
				union = append(union, ranks[r][step].idx...)
			}
			slices.Sort(union)
			want := slices.Sorted(slices.Values(w.idx))
			if !slices.Equal(union, want) {
				t.Fatalf("shuffle %v, step %d: the ranks hold %v, the whole batch %v", shuffle, step, union, want)
			}
		}
	}
}

func TestShardErrors(t *testing.T) {
	ds := numbered(t, 10, 1)
	for _, s := range []Shard{{Rank: 2, World: 2}, {Rank: -1, World: 2}, {World: -1}, {Rank: 1}} {
		_, err := NewLoader(ds, Config{BatchSize: 2, Shard: s})
		if !errors.Is(err, tensor.ErrArgument) || !strings.Contains(err.Error(), "rank") {
			t.Errorf("%+v: %v, want an ErrArgument naming the rank", s, err)
		}
	}
	_, err := NewLoader(ds, Config{BatchSize: 4, DropLast: true, Shard: Shard{Rank: 0, World: 4}})
	if !errors.Is(err, tensor.ErrArgument) || !strings.Contains(err.Error(), "rank 0's shard (of 4 ranks)") {
		t.Errorf("a batch larger than the shard with DropLast: %v", err)
	}
	err = tensor.Catch(func() { Shard{Rank: 3, World: 2}.Deal([]int{1}) })
	if !errors.Is(err, tensor.ErrArgument) {
		t.Errorf("Deal with a bad rank: %v", err)
	}
}
