package tensor

import "testing"

// TestGeneratorStateContinuesStream saves a generator's state after a
// draw, restores it into a fresh generator and checks that both draw the
// same next values, bit for bit; the default generator is the one
// ManualSeed reseeds.
func TestGeneratorStateContinuesStream(t *testing.T) {
	g := NewGenerator(42)
	Randn([]int{7, 3}, WithGenerator(g))
	seed, offset := g.State()
	if seed != 42 || offset == 0 {
		t.Fatalf("State() = %d, %d after a draw from seed 42", seed, offset)
	}
	want := Rand([]int{33}, WithGenerator(g)).Float32s()
	h := NewGenerator(1)
	h.SetState(seed, offset)
	got := Rand([]int{33}, WithGenerator(h)).Float32s()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("element %d: %v after SetState, %v from the saved generator", i, got[i], want[i])
		}
	}
	if s, o := h.State(); s != 42 || o != offset+blocksOf(33) {
		t.Fatalf("State() = %d, %d after drawing 33 from offset %d", s, o, offset)
	}
	ManualSeed(9)
	if s, o := DefaultGenerator().State(); s != 9 || o != 0 {
		t.Fatalf("DefaultGenerator().State() = %d, %d after ManualSeed(9)", s, o)
	}
}

// blocksOf is the stream offset a draw of n elements advances.
func blocksOf(n int) uint64 {
	g := NewGenerator(0)
	g.next(n)
	_, o := g.State()
	return o
}
