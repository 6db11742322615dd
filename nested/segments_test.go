package nested

import (
	"slices"
	"sync"
	"testing"

	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

// segLengths are the components of the segment-index tests: an empty
// one among them, odd sizes.
var segLengths = []int{3, 0, 2, 4}

// segNested returns a Nested of segLengths with rest [5] on dev (Max
// needs no empty component, so it gets its own lengths).
func segNested(dev tensor.Device, lengths []int) *Nested {
	rows := 0
	for _, l := range lengths {
		rows += l
	}
	v := make([]float32, rows*5)
	for i := range v {
		v[i] = float32(i%7) - 2.5
	}
	return FromValues(tensor.From(v, []int{rows, 5}, tensor.On(dev)), lengths)
}

// uploads runs f and returns how many segment indexes it uploaded.
func uploads(t *testing.T, f func()) int64 {
	t.Helper()
	before := segIndexUploads.Load()
	if err := tensor.Catch(f); err != nil {
		t.Fatal(err)
	}
	return segIndexUploads.Load() - before
}

// TestSegmentIndexUploadedOnce runs every segment reduction several times
// on one Nested, and on Nesteds derived from it (which share its
// offsets), and requires one upload of the index per device in all.
func TestSegmentIndexUploadedOnce(t *testing.T) {
	for _, dev := range devtest.Devices(t) {
		t.Run(dev.String(), func(t *testing.T) {
			n, m := segNested(dev, segLengths), segNested(dev, []int{3, 1, 2})
			got := uploads(t, func() {
				for range 3 {
					n.Sum()
					n.Mean()
					n.Softmax(0)
					n.LogSoftmax(0).Sum()
					n.Map((*tensor.Tensor).Exp).Sum()
				}
			})
			if got != 1 {
				t.Errorf("Sum, Mean, Softmax, LogSoftmax three times: %d uploads of the index, want 1", got)
			}
			if got := uploads(t, func() { m.Max(); m.Max(); m.Softmax(0).Max() }); got != 1 {
				t.Errorf("Max twice and Softmax: %d uploads, want 1", got)
			}
			if dev != tensor.CPU {
				// The same layout on the CPU needs an index there too, once.
				c := n.Map(func(v *tensor.Tensor) *tensor.Tensor { return v.To(tensor.CPU) })
				if got := uploads(t, func() { c.Sum(); c.Sum(); n.Sum() }); got != 1 {
					t.Errorf("on the CPU after %v: %d uploads, want 1", dev, got)
				}
			}
		})
	}
}

// TestSegmentIndexConcurrent reduces one fresh Nested from several
// goroutines at once: one upload, and every goroutine gets the sums of
// a single-goroutine run. Run it under -race.
func TestSegmentIndexConcurrent(t *testing.T) {
	for _, dev := range devtest.Devices(t) {
		t.Run(dev.String(), func(t *testing.T) {
			want := segNested(dev, segLengths).Sum().Float32s()
			n := segNested(dev, segLengths)
			const workers = 6
			sums := make([][]float32, workers)
			errs := make([]error, workers)
			got := uploads(t, func() {
				var wg sync.WaitGroup
				for w := range workers {
					wg.Go(func() {
						errs[w] = tensor.Catch(func() {
							c := tensor.NewContext()
							c.Scope(func() { sums[w] = n.Sum().Float32s() })
						})
					})
				}
				wg.Wait()
			})
			for w := range workers {
				if errs[w] != nil {
					t.Fatalf("goroutine %d: %v", w, errs[w])
				}
				if !slices.Equal(sums[w], want) {
					t.Errorf("goroutine %d: sums %v, want %v", w, sums[w], want)
				}
			}
			if got != 1 {
				t.Errorf("%d goroutines: %d uploads, want 1", workers, got)
			}
		})
	}
}

// TestSegmentIndexOutlivesScope reduces inside a Scope, then again after
// it closed: the cached index must not have been released with the
// Scope's tensors.
func TestSegmentIndexOutlivesScope(t *testing.T) {
	for _, dev := range devtest.Devices(t) {
		t.Run(dev.String(), func(t *testing.T) {
			n := segNested(dev, segLengths)
			want := n.Sum().Float32s()
			n = segNested(dev, segLengths)
			tensor.Scope(func() { n.Sum() })
			var got []float32
			if err := tensor.Catch(func() { got = n.Sum().Float32s() }); err != nil {
				t.Fatalf("Sum after a Scope closed around the first: %v", err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("sums %v, want %v", got, want)
			}
		})
	}
}
