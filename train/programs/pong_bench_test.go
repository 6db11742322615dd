package programs

import (
	"testing"

	"github.com/tessera-ml/tessera/tensor"
	"github.com/tessera-ml/tessera/train"
)

// BenchmarkPongStep times one step of the pong program on the CPU: a
// batch of 10 full 21-point episodes played and learned from.
func BenchmarkPongStep(b *testing.B) {
	p := train.Lookup("pong")
	for b.Loop() {
		runProgram(b, p, tensor.CPU, []string{"-steps", "1"}, train.Options{})
	}
}
