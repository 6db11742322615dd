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
		{&mincharStep, 200},
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
