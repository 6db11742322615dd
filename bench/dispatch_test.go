package bench

import (
	"testing"

	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

// mincharDispatchBound is the most GPU dispatches one min-char-rnn step
// (hidden 100, seq 25, vocab 65) may record with fusion on (issue 9's
// target is 200). The step recorded 387 before the view gradients,
// in-place writes and Cat pieces fused.
const mincharDispatchBound = 261

// TestMincharDispatches checks the dispatches of a warm min-char-rnn step
// on the GPU against mincharDispatchBound, and that the count is the same
// from step to step (fusion decisions depend only on ops and shapes).
func TestMincharDispatches(t *testing.T) {
	dev, ok := devtest.GPU(t)
	if !ok {
		t.Skip("no GPU")
	}
	if !tensor.Fusion() {
		t.Skip("fusion is off (TESSERA_FUSION)")
	}
	gpu, err := tensor.GPUDevice(dev)
	if err != nil {
		t.Fatal(err)
	}
	s := mincharStep.Quick[0]
	c := mincharStep.Setup(dev, s)
	defer c.Release()
	var counts []int64
	for range 3 {
		before := gpu.DispatchCount()
		c.Step()
		if err := tensor.Sync(dev); err != nil {
			t.Fatal(err)
		}
		counts = append(counts, gpu.DispatchCount()-before)
	}
	t.Logf("%s: %v dispatches per step", s.Label, counts)
	if counts[1] != counts[2] {
		t.Errorf("warm steps recorded %d and %d dispatches; want the same", counts[1], counts[2])
	}
	if counts[2] > mincharDispatchBound {
		t.Errorf("a warm step recorded %d dispatches, want at most %d", counts[2], mincharDispatchBound)
	}
}
