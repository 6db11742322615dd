package ddp_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tessera-ml/tessera/ddp"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/tensor"
)

// TestConcurrentLocalGroupCollectives: sums and maxima reach every rank
// with the same bits, on each rank's device, and Broadcast copies the
// root's tensor.
func TestConcurrentLocalGroupCollectives(t *testing.T) {
	devs := devtest.Devices(t)
	world := 3
	got := make([][]float32, world)
	spawn(t, world, func(rank int, g ddp.Group, c *tensor.Context) error {
		dev := devs[rank%len(devs)]
		// The sum is taken in float64 in rank order and rounded once, on
		// every rank alike, whatever its device.
		v := []float32{0.1 * float32(rank+1), float32(rank), -float32(rank)}
		sum := tensor.From(v, []int{3}, tensor.On(dev), tensor.In(c))
		mx := tensor.From(v, []int{3}, tensor.On(dev), tensor.In(c))
		ws, wm := g.AllReduce(sum, ddp.ReduceSum), g.AllReduce(mx, ddp.ReduceMax)
		if err := errors.Join(ws.Wait(), wm.Wait()); err != nil {
			return err
		}
		b := tensor.From([]int32{int32(rank), 7}, []int{2}, tensor.On(dev), tensor.In(c))
		if err := g.Broadcast(b, 2); err != nil {
			return err
		}
		if bs := b.Int32s(); bs[0] != 2 || bs[1] != 7 {
			return fmt.Errorf("Broadcast from rank 2 gave %v", bs)
		}
		if m := mx.Float32s(); m[0] != 0.1*float32(world) || m[1] != float32(world-1) || m[2] != 0 {
			return fmt.Errorf("max %v, want [%v %d 0]", m, 0.1*float32(world), world-1)
		}
		got[rank] = sum.Float32s()
		return nil
	})
	var exact float64
	for rank := range world {
		exact += float64(0.1 * float32(rank+1))
	}
	want := float32(exact)
	for rank, s := range got {
		if len(s) != 3 || math.Float32bits(s[0]) != math.Float32bits(want) || s[1] != 3 || s[2] != -3 {
			t.Errorf("rank %d: sum %v, want [%v 3 -3], the float64 sum in rank order rounded once", rank, s, want)
		}
	}
}

// TestConcurrentLocalGroupMismatchedShapes: a collective that the ranks
// call with different shapes, or one whose tensor a rank cannot read,
// fails on every rank with ErrCollective, naming both calls, instead of
// hanging or mixing data.
func TestConcurrentLocalGroupMismatchedShapes(t *testing.T) {
	spawn(t, 2, func(rank int, g ddp.Group, c *tensor.Context) error {
		x := tensor.Zeros([]int{2 + rank}, tensor.In(c))
		err := g.AllReduce(x, ddp.ReduceSum).Wait()
		if !errors.Is(err, ddp.ErrCollective) || !strings.Contains(err.Error(), "[3]") || !strings.Contains(err.Error(), "[2]") {
			return fmt.Errorf("AllReduce of [2] and [3]: %v, want ErrCollective naming both shapes", err)
		}
		// The world goes on: the next collective matches again.
		y := tensor.Ones([]int{2}, tensor.In(c))
		if err := g.AllReduce(y, ddp.ReduceSum).Wait(); err != nil {
			return err
		}
		if s := y.Float32s(); s[0] != 2 {
			return fmt.Errorf("sum of ones over two ranks: %v", s)
		}
		// A tensor that cannot be read fails every rank's call too.
		z := tensor.Ones([]int{2}, tensor.In(c))
		if rank == 1 {
			z.Release()
		}
		if err := g.AllReduce(z, ddp.ReduceSum).Wait(); !errors.Is(err, ddp.ErrCollective) || !strings.Contains(err.Error(), "rank 1 cannot read") {
			return fmt.Errorf("AllReduce of a released tensor on rank 1: %v, want ErrCollective on every rank", err)
		}
		return nil
	})
}

// TestLocalGroupTimeout: a rank that never joins makes the others' Wait
// fail with ErrTimeout naming it.
func TestLocalGroupTimeout(t *testing.T) {
	gs := ddp.NewLocalGroups(3, 50*time.Millisecond)
	x := tensor.Zeros([]int{1}, tensor.In(tensor.NewContext()))
	w0 := gs[0].AllReduce(x, ddp.ReduceSum)
	y := tensor.Zeros([]int{1}, tensor.In(tensor.NewContext()))
	w2 := gs[2].AllReduce(y, ddp.ReduceSum)
	for rank, w := range map[int]ddp.Work{0: w0, 2: w2} {
		err := w.Wait()
		var e *ddp.Error
		if !errors.As(err, &e) || !errors.Is(err, ddp.ErrTimeout) || e.Rank != 1 {
			t.Errorf("rank %d: Wait = %v, want ErrTimeout naming rank 1", rank, err)
		}
	}
}

// TestConcurrentBuffersFollowRankZero: after each Backward every rank
// holds rank 0's running statistics, bitwise; with LocalBuffers each
// keeps its own.
func TestConcurrentBuffersFollowRankZero(t *testing.T) {
	for _, local := range []bool{false, true} {
		t.Run(fmt.Sprintf("LocalBuffers=%v", local), func(t *testing.T) {
			bufs := make([][][]float32, 2)
			spawn(t, 2, func(rank int, g ddp.Group, c *tensor.Context) error {
				model := nn.NewSequential(nn.NewLinear(6, 8, tensor.In(c)), nn.NewBatchNorm1d(8, tensor.In(c)),
					nn.Func((*tensor.Tensor).ReLU), nn.NewLinear(8, 4, tensor.In(c)))
				r, err := ddp.New(model, g, ddp.Options{LocalBuffers: local})
				if err != nil {
					return err
				}
				for step := range 2 {
					x, y := problem.batch([]int{4*step + 2*rank, 4*step + 2*rank + 1, 20 + rank}, tensor.CPU, c)
					if err := r.Backward(nn.CrossEntropy(model.Forward(x), y)); err != nil {
						return err
					}
				}
				bufs[rank] = values(nn.Buffers(model))
				return nil
			})
			if t.Failed() {
				return
			}
			d := bitwiseEqual(bufs[0], bufs[1])
			switch {
			case !local && d != "":
				t.Errorf("the ranks' buffers differ: %s", d)
			case local && d == "":
				t.Errorf("with LocalBuffers the ranks' buffers, from different batches, are equal")
			}
		})
	}
}

// flags is a module with buffers of every dtype but floats: a Bool mask
// and an Int32 counter, beside a parameter.
type flags struct{ w, mask, count *tensor.Tensor }

func (f *flags) Slots() []nn.Slot {
	return []nn.Slot{nn.Param("w", &f.w), nn.Buffer("mask", &f.mask), nn.Buffer("count", &f.count)}
}
func (f *flags) Children() []nn.Child { return nil }

// TestConcurrentNewBroadcastsEveryDType: New gives every rank rank 0's
// parameters and buffers, Bool and Int32 ones included.
func TestConcurrentNewBroadcastsEveryDType(t *testing.T) {
	got := make([]string, 2)
	spawn(t, 2, func(rank int, g ddp.Group, c *tensor.Context) error {
		f := &flags{
			w:     tensor.From([]float32{float32(rank), 2}, []int{2}, tensor.In(c)).SetRequiresGrad(true),
			mask:  tensor.From([]bool{rank == 0, rank != 0, true}, []int{3}, tensor.In(c)).Keep(),
			count: tensor.From([]int32{int32(10 + rank)}, []int{}, tensor.In(c)).Keep(),
		}
		if _, err := ddp.New(f, g, ddp.Options{}); err != nil {
			return err
		}
		got[rank] = fmt.Sprint(f.w.Float32s(), f.mask.Bools(), f.count.Int32s())
		return nil
	})
	if want := "[0 2] [true false true] [10]"; got[0] != want || got[1] != want {
		t.Errorf("after New the ranks hold %q and %q, want rank 0's %q", got[0], got[1], want)
	}
}

// TestConcurrentRunLocalAbortsOnFailure: a rank that fails, by an error
// or a typed panic, aborts the world: the others' collectives fail at
// once with ErrAborted naming it, not after the timeout.
func TestConcurrentRunLocalAbortsOnFailure(t *testing.T) {
	for _, how := range []string{"error", "panic"} {
		start := time.Now()
		var rank0 error
		err := ddp.RunLocal([]tensor.Device{tensor.CPU, tensor.CPU}, time.Minute,
			func(rank int, dev tensor.Device, g ddp.Group, c *tensor.Context) error {
				if rank == 1 {
					if how == "panic" {
						tensor.Zeros([]int{2}, tensor.In(c)).MatMul(tensor.Zeros([]int{3}, tensor.In(c)))
					}
					return errors.New("no data")
				}
				_, rank0 = ddp.New(mlp(sizes, 1, dev, c), g, ddp.Options{})
				return rank0
			})
		var e *ddp.Error
		switch {
		case !errors.As(rank0, &e) || !errors.Is(rank0, ddp.ErrAborted) || e.Rank != 1:
			t.Errorf("%s: rank 0's New = %v, want ErrAborted naming rank 1", how, rank0)
		case time.Since(start) > 10*time.Second:
			t.Errorf("%s: rank 0 waited %v for the failed rank", how, time.Since(start))
		case !strings.Contains(err.Error(), "rank 1 on cpu: ") || !strings.Contains(err.Error(), "rank 0 on cpu: "):
			t.Errorf("%s: RunLocal = %v, want both ranks' errors", how, err)
		}
		t.Logf("%s: %v", how, err)
	}
}
