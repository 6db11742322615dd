package tensor_test

import (
	"testing"

	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/tensor"
)

// TestInPlaceOnPendingExtendsIt checks that in-place ops on a pending
// result (a gradient being clipped, say) join its expression: no kernel
// runs until the value is used, every view of the storage sees the new
// value, and the values match the eager ones, on every device, including
// a chain too long to extend (which runs the op as before).
func TestInPlaceOnPendingExtendsIt(t *testing.T) {
	for _, dev := range fusionDevices(t) {
		run := func(countKernels bool) [][]float32 {
			a := tensor.Linspace(-3, 3, 33, tensor.On(dev)).Reshape(3, 11)
			b := tensor.Linspace(2, -1, 11, tensor.On(dev))
			g := a.Mul(b).Add(b) // pending with fusion on
			held := g            // a user's reference, read after the clip
			before := tensor.ReadCounters()
			g.ClampInPlace(-0.5, 0.75)
			g.MulScalarInPlace(2)
			if k := tensor.ReadCounters().FusedKernels - before.FusedKernels; countKernels && k != 0 {
				t.Errorf("%v: in-place ops on a pending result ran %d kernels, want none", dev, k)
			}
			g.AddcmulInPlace(a, b, 0.25) // with operands: extends it too
			s := tensor.Zeros([]int{3, 11}, tensor.On(dev))
			s.AddcmulInPlace(g, g, 1) // one fused kernel computing g inline
			long := a.AddScalar(1)
			for range 20 { // past the node limit: extending declines
				long = long.Tanh().MulScalar(1.5)
				long.ClampInPlace(-1, 1)
			}
			return [][]float32{held.Float32s(), g.Float32s(), s.Float32s(), long.Float32s()}
		}
		fusedMatchesEager(t, dev, run)
	}
}

// TestInPlaceWriteKeepsReadersPending checks that pending results reading
// a tensor written in place see its old value: one reader is realized,
// several share one copy and stay pending (one kernel for the copy, none
// for them until read), and their values match the eager ones.
func TestInPlaceWriteKeepsReadersPending(t *testing.T) {
	for _, dev := range fusionDevices(t) {
		run := func(countKernels bool) [][]float32 {
			p := tensor.Linspace(-1, 1, 65, tensor.On(dev))
			x := tensor.Linspace(3, -2, 7*65, tensor.On(dev)).Reshape(7, 65)
			readers := make([]*tensor.Tensor, 5)
			for i := range readers {
				readers[i] = x.Narrow(0, i, 1).Add(p).MulScalar(float64(i + 1)) // pending, reads p
			}
			before := tensor.ReadCounters()
			p.AddcmulInPlace(p, x.Narrow(0, 6, 1).Squeeze(0), 0.5)
			if k := tensor.ReadCounters().FusedKernels - before.FusedKernels; countKernels && k != 0 {
				t.Errorf("%v: writing p realized %d of its readers, want none (they share a copy)", dev, k)
			}
			var out [][]float32
			for _, r := range readers {
				out = append(out, r.Float32s())
			}
			return append(out, p.Float32s(), tensor.Stack(readers[:3], 0).Float32s())
		}
		fusedMatchesEager(t, dev, run)
	}
}

// TestCatComputesPendingPieces checks that Cat writes a pending piece's
// expression straight into its part of the result (one kernel per piece,
// the piece itself left pending) and that the piece still reads right.
func TestCatComputesPendingPieces(t *testing.T) {
	for _, dev := range fusionDevices(t) {
		run := func(countKernels bool) [][]float32 {
			a := tensor.Linspace(-2, 2, 33, tensor.On(dev)).Reshape(3, 11)
			b := tensor.Linspace(1, 0, 11, tensor.On(dev))
			pieces := []*tensor.Tensor{a.Narrow(0, 0, 1).Reshape(11).Mul(b).Tanh(), a.Narrow(0, 1, 1).Reshape(11), b.AddScalar(1).Sqrt()}
			before := tensor.ReadCounters()
			s := tensor.Cat(pieces, 0)
			d := tensor.ReadCounters()
			if k, bytes := d.FusedKernels-before.FusedKernels, d.StorageBytes-before.StorageBytes; countKernels && (k != 2 || bytes != 33*4) {
				t.Errorf("%v: Cat ran %d fused kernels and allocated %d bytes, want 2 (one per pending piece) and the result's %d", dev, k, bytes, 33*4)
			}
			return [][]float32{s.Float32s(), pieces[0].Float32s(), pieces[2].Float32s()}
		}
		fusedMatchesEager(t, dev, run)
	}
}

// TestFusedSumRealizesTheSumSoFar checks that a long sum of pending terms
// (a weight's per-step gradients) computes the sum so far when the next
// term does not fit, keeping the term inlined: one kernel per filled
// expression, not one per term, with the eager values.
func TestFusedSumRealizesTheSumSoFar(t *testing.T) {
	for _, dev := range fusionDevices(t) {
		run := func(countKernels bool) [][]float32 {
			u := tensor.Linspace(-1, 1, 7*33, tensor.On(dev)).Reshape(33, 7)
			v := tensor.Linspace(2, -2, 7*65, tensor.On(dev)).Reshape(65, 7)
			before := tensor.ReadCounters()
			var acc *tensor.Tensor
			for i := range 7 { // outer products of two leaves each
				term := u.Narrow(1, i, 1).Mul(v.Narrow(1, i, 1).Reshape(1, 65))
				if acc == nil {
					acc = term
				} else {
					acc = acc.Add(term)
				}
			}
			out := acc.Float32s()
			if k := tensor.ReadCounters().FusedKernels - before.FusedKernels; countKernels && k > 3 {
				t.Errorf("%v: a sum of 7 two-leaf terms ran %d fused kernels, want at most 3", dev, k)
			}
			return [][]float32{out}
		}
		fusedMatchesEager(t, dev, run)
	}
}

// TestCopyFromPendingReadingTarget checks t.CopyFrom(expression of t):
// one fused kernel computes it into t, and the expression, read after t
// changes again, still shows the value it had.
func TestCopyFromPendingReadingTarget(t *testing.T) {
	for _, dev := range fusionDevices(t) {
		run := func(countKernels bool) [][]float32 {
			m := tensor.Linspace(-1, 1, 65, tensor.On(dev))
			g := tensor.Linspace(2, 0, 65, tensor.On(dev))
			decayed := m.MulScalar(0.9)
			next := tensor.Addcmul(decayed, g, g, 0.1)
			decayed.Release()
			before := tensor.ReadCounters()
			m.CopyFrom(next)
			if k := tensor.ReadCounters().FusedKernels - before.FusedKernels; countKernels && k != 1 {
				t.Errorf("%v: CopyFrom of a pending expression of its target ran %d fused kernels, want 1", dev, k)
			}
			m.AddScalarInPlace(100) // next must keep the value it had
			return [][]float32{m.Float32s(), next.Float32s()}
		}
		fusedMatchesEager(t, dev, run)
	}
}

// TestInPlaceSumDefers checks that a run of in-place additions into a
// realized GPU tensor (backward's gradient sums) is deferred into pending
// expressions, a few kernels for many terms, that a view and an earlier
// pending reader see the right values, and that kept tensors update at
// once.
func TestInPlaceSumDefers(t *testing.T) {
	for _, dev := range fusionDevices(t) {
		run := func(countKernels bool) [][]float32 {
			acc := tensor.Linspace(-1, 1, 7*33, tensor.On(dev)).Reshape(7, 33).Clone()
			tensor.Realize(acc)
			early := acc.MulScalar(2) // reads acc before the sum
			terms := make([]*tensor.Tensor, 12)
			for i := range terms {
				terms[i] = tensor.Linspace(float64(i), -1, 7*33, tensor.On(dev)).Reshape(7, 33)
			}
			gpu, _ := tensor.GPUDevice(dev)
			var before int64
			if gpu != nil {
				before = gpu.DispatchCount()
			}
			for _, term := range terms {
				acc.AddInPlace(term, 1)
			}
			if gpu != nil && countKernels {
				if k := gpu.DispatchCount() - before; k > 4 {
					t.Errorf("%v: 12 in-place additions recorded %d dispatches, want at most 4", dev, k)
				}
			}
			row := acc.Narrow(0, 3, 1)
			kept := tensor.Zeros([]int{65}, tensor.On(dev)).Keep()
			kept.AddInPlace(tensor.Linspace(0, 1, 65, tensor.On(dev)), 1)
			return [][]float32{row.Float32s(), acc.Float32s(), early.Float32s(), kept.Float32s()}
		}
		fusedMatchesEager(t, dev, run)
	}
}

// fusedMatchesEager runs run with fusion off, then on (told whether to
// check its counts), and compares the values to a few ulps.
func fusedMatchesEager(t *testing.T, dev tensor.Device, run func(fused bool) [][]float32) {
	t.Helper()
	var ref, got [][]float32
	withFusion(false, func() { ref = run(false) })
	withFusion(true, func() { got = run(true) })
	checkFusedClose(t, dev, approx.Float32(16), got, ref)
}
