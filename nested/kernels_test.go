package nested_test

import (
	"fmt"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/nested"
	"github.com/tessera-ml/tessera/tensor"
)

// nodes adds to seen every op node reachable from ts.
func nodes(seen map[*tensor.Node]bool, ts ...*T) map[*tensor.Node]bool {
	for _, t := range ts {
		if t == nil || t.Source() == nil || seen[t.Source()] {
			continue
		}
		n := t.Source()
		seen[n] = true
		nodes(seen, n.Inputs...)
	}
	return seen
}

// counts is how many ops (CPU: recorded op nodes) or dispatches (GPU)
// an op's forward and backward passes ran.
type counts struct{ forward, backward int64 }

// cpuCounts runs c on a Nested of lengths on the CPU and counts the op
// nodes of the forward pass and those that the backward pass adds,
// recorded with CreateGraph from an output gradient that requires grad
// (so that every op of the backward pass is recorded).
func cpuCounts(c opCase, lengths []int) counts {
	xv := data(append([]int{total(lengths)}, c.rest...), 1, tensor.Float32, tensor.CPU).SetRequiresGrad(true)
	ex := extras(c, lengths, tensor.Float32, tensor.CPU)
	out := outputs(c.ragged(nested.FromValues(xv, lengths), ex))
	fwd := nodes(map[*tensor.Node]bool{}, out)
	u := tensor.OnesLike(out).SetRequiresGrad(true)
	grads := autograd.Grad(out, append([]*T{xv}, ex...), autograd.GradOutput(u), autograd.CreateGraph())
	all := nodes(map[*tensor.Node]bool{}, append(grads, out)...)
	return counts{int64(len(fwd)), int64(len(all) - len(fwd))}
}

// gpuCounts runs c on a Nested of lengths on dev and counts the
// dispatches of the op and of the backward pass of the Sum of its
// result.
func gpuCounts(t *testing.T, c opCase, lengths []int, dev tensor.Device) counts {
	g := devtest.Runtime(t, dev)
	xv := data(append([]int{total(lengths)}, c.rest...), 1, tensor.Float32, dev).SetRequiresGrad(true)
	ex := extras(c, lengths, tensor.Float32, dev)
	x := nested.FromValues(xv, lengths)
	if err := tensor.Sync(dev); err != nil {
		t.Fatal(err)
	}
	d0 := g.DispatchCount()
	out := outputs(c.ragged(x, ex))
	d1 := g.DispatchCount()
	autograd.Backward(out.Sum())
	d2 := g.DispatchCount()
	if err := tensor.Sync(dev); err != nil {
		t.Fatal(err)
	}
	return counts{d1 - d0, d2 - d1}
}

// TestKernelCountsDoNotGrowWithComponents runs every ragged op on 3 and
// on 30 components and requires the same number of kernels, forward and
// backward: op nodes on the CPU, dispatches on the GPU.
func TestKernelCountsDoNotGrowWithComponents(t *testing.T) {
	gpu, hasGPU := devtest.GPU(t)
	for _, c := range cases() {
		t.Run(c.name, func(t *testing.T) {
			var few, many counts
			measure := func(f func(lengths []int) counts) {
				if err := tensor.Catch(func() {
					few, many = f(lengthsFor(3, c.nonEmpty)), f(lengthsFor(30, c.nonEmpty))
				}); err != nil {
					t.Fatal(err)
				}
			}
			measure(func(l []int) counts { return cpuCounts(c, l) })
			report := fmt.Sprintf("CPU ops forward %d, backward %d", few.forward, few.backward)
			if few != many {
				t.Errorf("CPU ops (forward, backward): %v for 3 components, %v for 30", few, many)
			}
			if hasGPU {
				measure(func(l []int) counts { return gpuCounts(t, c, l, gpu) })
				report += fmt.Sprintf("; GPU dispatches forward %d, backward %d (with the loss's Sum)", few.forward, few.backward)
				if few != many {
					t.Errorf("GPU dispatches (forward, backward): %v for 3 components, %v for 30", few, many)
				}
			}
			t.Log(report)
		})
	}
}
