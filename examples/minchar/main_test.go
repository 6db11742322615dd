package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/tensor"
)

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// TestTrainLearns trains a small min-char-rnn briefly on the CPU and
// checks that the loss falls and that sampling and reporting work.
func TestTrainLearns(t *testing.T) {
	var out bytes.Buffer
	c := config{steps: 300, hidden: 32, seqLen: 25, every: 100, sample: 40, lr: 0.1, seed: 1}
	losses := train(c, tensor.CPU, &out)
	first, last := mean(losses[:24]), mean(losses[len(losses)-24:])
	t.Logf("mean loss per sequence: first 24 steps %.2f, last 24 steps %.2f", first, last)
	if !(last < 0.6*first) {
		t.Errorf("loss did not fall enough: %.2f -> %.2f", first, last)
	}
	if s := out.String(); !strings.Contains(s, "iter 200, loss:") || strings.Count(s, "----") != 6 {
		t.Errorf("unexpected report:\n%s", s)
	}
}
