package bench

import (
	"testing"

	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

// TestTrainingStepDispatches counts the GPU dispatches one training step
// records, with fusion on and off, at the quick sizes (batch does not
// change the count): fusion must bring the MLP step within issue 9's
// bound, and must not record more than the one-kernel-per-op path.
func TestTrainingStepDispatches(t *testing.T) {
	dev := devtest.MustGPU(t)
	for _, c := range []struct {
		w        *Workload
		maxFused int
	}{
		{&mlpStep, 25},
		{&mincharStep, 192},
	} {
		counts := map[bool]float64{}
		for _, on := range []bool{true, false} {
			was := tensor.SetFusion(on)
			tc, err := openTessera(c.w, c.w.Quick[0], dev)
			tensor.SetFusion(was)
			if err != nil {
				t.Fatalf("%s: %v", c.w.Name, err)
			}
			tc.c.Release()
			counts[on] = tc.dispatches
		}
		t.Logf("%s: %.0f dispatches per step with fusion, %.0f without", c.w.Name, counts[true], counts[false])
		if counts[true] > float64(c.maxFused) || counts[true] > counts[false] {
			t.Errorf("%s: %.0f dispatches per step with fusion (at most %d), %.0f without", c.w.Name, counts[true], c.maxFused, counts[false])
		}
	}
}

// TestMincharDispatchesSteady checks that every warm min-char-rnn step
// records as many GPU dispatches as the one before: no state or
// parameter carries a pending expression from step to step, growing
// until it fills (which made the count vary between 260 and 288).
func TestMincharDispatchesSteady(t *testing.T) {
	dev := devtest.MustGPU(t)
	if !tensor.Fusion() {
		t.Skip("fusion is off (TESSERA_FUSION)")
	}
	gpu, err := tensor.GPUDevice(dev)
	if err != nil {
		t.Fatal(err)
	}
	c := mincharStep.Setup(dev, mincharStep.Quick[0])
	defer c.Release()
	var counts []int64
	for range 5 {
		before := gpu.DispatchCount()
		c.Step()
		if err := tensor.Sync(dev); err != nil {
			t.Fatal(err)
		}
		counts = append(counts, gpu.DispatchCount()-before)
	}
	t.Logf("dispatches per step: %v", counts)
	for i := 2; i < len(counts); i++ {
		if counts[i] != counts[1] {
			t.Errorf("warm steps recorded %v dispatches; want the same every step", counts[1:])
			break
		}
	}
}
