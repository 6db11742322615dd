package ddp_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/ddp"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/tensor"
)

// A fakeGroup is rank rank of a world of size whose other ranks hold
// what this one holds: its collectives change nothing and finish at
// once. When log is not nil, it records each AllReduce there.
type fakeGroup struct {
	rank, size int
	log        *[]string
}

func (g fakeGroup) Rank() int { return g.rank }
func (g fakeGroup) Size() int { return g.size }

func (g fakeGroup) AllReduce(t *tensor.Tensor, op ddp.ReduceOp) ddp.Work {
	if g.log != nil {
		*g.log = append(*g.log, fmt.Sprintf("all-reduce %v", t.Shape()))
	}
	if op == ddp.ReduceSum { // size equal copies
		t.MulScalarInPlace(float64(g.size))
	}
	return done{}
}

func (g fakeGroup) Broadcast(*tensor.Tensor, int) error { return nil }

type done struct{}

func (done) Wait() error { return nil }

// A recordingGroup passes its collectives on to Group and logs them.
type recordingGroup struct {
	ddp.Group
	log *[]string
}

func (g recordingGroup) AllReduce(t *tensor.Tensor, op ddp.ReduceOp) ddp.Work {
	*g.log = append(*g.log, fmt.Sprintf("all-reduce %v", t.Shape()))
	return g.Group.AllReduce(t, op)
}

// TestAllReduceStartsDuringBackward: with a bucket per parameter, from
// the second step on (the first lays the buckets out in the order
// backward produces the gradients), the first all-reduce starts as soon
// as the last layer's weight has its gradient, long before backward ends;
// with one bucket, only at the end.
func TestAllReduceStartsDuringBackward(t *testing.T) {
	for _, bytes := range []int{1, 0} {
		var log []string
		c := tensor.NewContext()
		model := mlp(sizes, 1, tensor.CPU, c)
		for name, p := range nn.NamedParameters(model) { // before New's hooks, so that they run first
			p.RegisterHook(func(*tensor.Tensor) *tensor.Tensor {
				log = append(log, "gradient "+name)
				return nil
			})
		}
		r, err := ddp.New(model, fakeGroup{rank: 0, size: 2, log: &log}, ddp.Options{BucketBytes: bytes})
		if err != nil {
			t.Fatal(err)
		}
		var order []string // the gradients in the order the first pass gave them
		for step := range 2 {
			log = nil
			x, y := problem.batch([]int{0, 1, 2}, tensor.CPU, c)
			if err := r.Backward(nn.CrossEntropy(model.Forward(x), y)); err != nil {
				t.Fatal(err)
			}
			t.Logf("BucketBytes %d, step %d: %s", bytes, step, strings.Join(log, "; "))
			if step == 0 {
				for _, s := range log {
					if name, ok := strings.CutPrefix(s, "gradient "); ok {
						order = append(order, name)
					}
				}
			}
		}
		first := slices.IndexFunc(log, func(s string) bool { return strings.HasPrefix(s, "all-reduce") })
		last := slices.Index(log, "gradient "+order[len(order)-1])
		switch {
		case first < 0 || last < 0:
			t.Errorf("BucketBytes %d: no all-reduce or no gradient of %s: %v", bytes, order[len(order)-1], log)
		case bytes == 1 && first != 1:
			t.Errorf("BucketBytes 1: the first all-reduce starts at event %d, want 1, right after the first gradient", first)
		case bytes == 1 && first > last:
			t.Errorf("BucketBytes 1: the first all-reduce starts at event %d, after the last gradient (event %d)", first, last)
		case bytes == 0 && first < last:
			t.Errorf("one bucket: its all-reduce starts at event %d, before the last gradient (event %d)", first, last)
		}
		if n := strings.Count(strings.Join(log, ";"), "all-reduce"); bytes == 1 && n != 6 {
			t.Errorf("BucketBytes 1: %d all-reduces, want one per parameter (6)", n)
		}
		var want [][]string
		for _, name := range order {
			if want = append(want, []string{name}); bytes == 0 {
				want = [][]string{order}
			}
		}
		if got := r.Buckets(); !equalBuckets(got, want) {
			t.Errorf("BucketBytes %d: buckets after the first step %v, want the gradients' order %v", bytes, got, want)
		}
	}
}
