package main

import "testing"

// TestTrainRuns trains for a few steps on the default device (the CPU in
// CI) to check the command end to end: data loading, model, optimizer,
// evaluation.
func TestTrainRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("loads MNIST")
	}
	if err := train([]string{"-steps", "5", "-batch", "32", "-hidden", "32"}); err != nil {
		t.Fatal(err)
	}
}

func TestDevicesRuns(t *testing.T) {
	if err := devices(); err != nil {
		t.Fatal(err)
	}
}
