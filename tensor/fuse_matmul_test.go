package tensor_test

import (
	"fmt"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/tensor"
)

// epilogueCases are programs whose elementwise ops read a matmul
// product, or feed a reduction, on odd shapes: on a GPU with fusion on
// each product is stored through its epilogue and each reduction reads
// its pending input through a prologue, with the dispatches each records.
var epilogueCases = []struct {
	name       string
	dispatches int64 // on a GPU with fusion on
	f          func(x, w, b, acc *tensor.Tensor) *tensor.Tensor
}{
	{"linear-relu", 1, func(x, w, b, acc *tensor.Tensor) *tensor.Tensor { return x.MatMul(w.T()).Add(b).ReLU() }},
	{"tanh-scaled", 1, func(x, w, b, acc *tensor.Tensor) *tensor.Tensor { return x.MatMul(w.T()).MulScalar(0.5).Tanh() }},
	{"accumulate", 1, func(x, w, b, acc *tensor.Tensor) *tensor.Tensor { return acc.Add(x.MatMul(w.T())) }},
	{"tanh-grad", 1, func(x, w, b, acc *tensor.Tensor) *tensor.Tensor {
		return acc.Square().RSub(1).Mul(x.MatMul(w.T())) // (1-h²)·(x·wᵀ)
	}},
	{"bool-mask", 1, func(x, w, b, acc *tensor.Tensor) *tensor.Tensor {
		return tensor.Where(acc.GtScalar(0), x.MatMul(w.T()), tensor.Full(nil, 0, tensor.Like(acc)))
	}},
	{"vector", 1, func(x, w, b, acc *tensor.Tensor) *tensor.Tensor { return w.MatMul(x.Select(0, 2)).Add(b).Sigmoid() }},
	{"stacked-vectors", 3, func(x, w, b, acc *tensor.Tensor) *tensor.Tensor {
		rows := make([]*tensor.Tensor, 3) // each [65] product written into its [1 65] row of the stack
		for j := range rows {
			rows[j] = w.MatMul(x.Select(0, j)).Add(b)
		}
		return tensor.Stack(rows, 0)
	}},
	{"flattened-cat", 2, func(x, w, b, acc *tensor.Tensor) *tensor.Tensor {
		// each pending [7 65] result written as its [455] piece of the Cat
		return tensor.Cat([]*tensor.Tensor{x.MatMul(w.T()).Add(b).Flatten(0, 1), acc.Tanh().Flatten(0, 1)}, 0)
	}},
	{"outer-products", 1, func(x, w, b, acc *tensor.Tensor) *tensor.Tensor {
		for j := range 3 { // K = 1: elementwise products, one kernel for the sum
			acc = acc.Add(x.Select(1, j).Unsqueeze(1).MatMul(w.Select(1, j).Unsqueeze(0)))
		}
		return acc
	}},
	{"masked-sum", 1, func(x, w, b, acc *tensor.Tensor) *tensor.Tensor {
		return tensor.Where(acc.GtScalar(0), acc.Exp(), tensor.Full(nil, 0, tensor.Like(acc))).SumDims([]int{0}, false)
	}},
	{"count", 1, func(x, w, b, acc *tensor.Tensor) *tensor.Tensor { return acc.GtScalar(0.25).Cast(tensor.Float32).Sum() }},
	{"max-prologue", 1, func(x, w, b, acc *tensor.Tensor) *tensor.Tensor { return acc.Mul(b).Abs().Amax([]int{1}, true) }},
	{"three-products", 4, func(x, w, b, acc *tensor.Tensor) *tensor.Tensor {
		return x.MatMul(w.T()).Add(acc.Tanh().MatMul(w).MatMul(w.T())).ReLU() // one product inlined, the others realized
	}},
}

// epilogueInputs are x (7×33), w (65×33), b (65) and acc (7×65).
func epilogueInputs(dev tensor.Device) (x, w, b, acc *tensor.Tensor) {
	g := tensor.NewGenerator(5)
	on := []tensor.Option{tensor.On(dev), tensor.WithGenerator(g)}
	return tensor.Uniform([]int{7, 33}, -1, 1, on...), tensor.Uniform([]int{65, 33}, -1, 1, on...),
		tensor.Uniform([]int{65}, -1, 1, on...), tensor.Uniform([]int{7, 65}, -1, 1, on...)
}

// TestMatMulEpilogueMatchesEager runs epilogueCases with fusion off and
// on, on every device: fused results agree with eager ones within a few
// ulp, the GPU's with the CPU's within float tolerance, and on the GPU
// each case records the dispatches it states.
func TestMatMulEpilogueMatchesEager(t *testing.T) {
	devs := fusionDevices(t)
	results := map[string][]float32{}
	for _, dev := range devs {
		for _, c := range epilogueCases {
			var ref, got []float32
			var disp int64
			for _, on := range []bool{false, true} {
				withFusion(on, func() {
					tensor.Scope(func() {
						x, w, b, acc := epilogueInputs(dev)
						count := dispatchCounter(t, dev)
						v := c.f(x, w, b, acc).Float32s()
						if on {
							got, disp = v, count()
						} else {
							ref = v
						}
					})
				})
			}
			checkFusedClose(t, dev, approx.Float32(8).WithScale(1), [][]float32{got}, [][]float32{ref})
			if dev.Kind == tensor.KindGPU && disp != c.dispatches {
				t.Errorf("%s on %v: %d dispatches with fusion, want %d", c.name, dev, disp, c.dispatches)
			}
			if cpu, ok := results[c.name]; ok {
				approx.Require(t, fmt.Sprintf("%s GPU vs CPU", c.name), got, cpu, approx.AbsRel(1e-5, 1e-4))
			}
			results[c.name] = got
		}
	}
}

// dispatchCounter returns a function reporting the dispatches recorded
// on dev since the call (0 on the CPU), after syncing the inputs.
func dispatchCounter(t *testing.T, dev tensor.Device) func() int64 {
	if dev.Kind != tensor.KindGPU {
		return func() int64 { return 0 }
	}
	g := gpuRuntime(t, dev)
	if err := tensor.Sync(dev); err != nil {
		t.Fatal(err)
	}
	before := g.DispatchCount()
	return func() int64 { return g.DispatchCount() - before }
}

// TestFusionCopyOnWrite checks that pending results, products included,
// see their inputs as they were when made, after an in-place update of
// a whole parameter gives it fresh memory, and that their old memory is
// released with them.
func TestFusionCopyOnWrite(t *testing.T) {
	for _, dev := range fusionDevices(t) {
		run := func() [][]float32 {
			var out [][]float32
			tensor.Scope(func() {
				x, w, b, acc := epilogueInputs(dev)
				y := x.MatMul(w.T())                  // pending, reads w
				z := y.Add(b).Tanh()                  // pending, reads w and b
				u := acc.Mul(acc)                     // pending, reads acc
				w.AddInPlace(w, -0.5)                 // an operand shares w: realizes y and z
				b.AddInPlace(u.Sum(), 1)              // b fresh, z reads the old b
				acc.MulScalarInPlace(3)               // u reads the old acc
				w.AddInPlace(acc.T().MatMul(x), -0.1) // the product inlined into the update
				out = [][]float32{y.Float32s(), z.Float32s(), u.Float32s(), w.Float32s(), b.Float32s(), acc.Float32s()}
			})
			return out
		}
		base := waitLive(-1)
		var ref, got [][]float32
		withFusion(false, func() { ref = run() })
		withFusion(true, func() { got = run() })
		checkFusedClose(t, dev, approx.Float32(16).WithScale(1), got, ref)
		if n := waitLive(base); n > base {
			t.Errorf("%v: %d storages live after the scopes, %d before", dev, n, base)
		}
	}
}

// TestFusedMLPGradientsGPU trains two SGD steps of a small ReLU MLP with
// cross-entropy on the GPU with fusion on and on the CPU: losses,
// gradients and updated weights agree within float tolerance.
func TestFusedMLPGradientsGPU(t *testing.T) {
	dev := gpuOrSkip(t)
	run := func(dev tensor.Device) [][]float32 {
		var out [][]float32
		tensor.Scope(func() {
			x, w1, b1, _ := epilogueInputs(dev)
			g := tensor.NewGenerator(9)
			w2 := tensor.Uniform([]int{7, 65}, -0.3, 0.3, tensor.On(dev), tensor.WithGenerator(g))
			b2 := tensor.Uniform([]int{7}, -0.3, 0.3, tensor.On(dev), tensor.WithGenerator(g))
			params := []*tensor.Tensor{w1, b1, w2, b2}
			for _, p := range params {
				p.SetRequiresGrad(true)
			}
			y := tensor.FromInts([]int{0, 3, 6, 1, 1, 5, 2}).To(dev)
			for range 2 {
				h := x.MatMul(w1.T()).Add(b1).ReLU()
				logits := h.MatMul(w2.T()).Add(b2)
				loss := logits.LogSoftmax(1).Gather(1, y.Unsqueeze(1)).Neg().Mean()
				autograd.Backward(loss)
				out = append(out, loss.Float32s())
				tensor.NoGrad(func() {
					for _, p := range params {
						out = append(out, p.Grad().Float32s())
						p.AddInPlace(p.Grad(), -0.5)
						p.SetGrad(nil)
					}
				})
			}
			for _, p := range params {
				out = append(out, p.Float32s())
			}
		})
		return out
	}
	var gpu, cpu [][]float32
	withFusion(true, func() { gpu = run(dev) })
	cpu = run(tensor.CPU)
	for i := range cpu {
		approx.Require(t, fmt.Sprintf("value %d", i), gpu[i], cpu[i], approx.AbsRel(2e-5, 1e-4))
	}
}
