package data

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/tensor"
)

func TestRampSeries(t *testing.T) {
	f, err := RampSeries(1000, 9, 3)
	if err != nil {
		t.Fatal(err)
	}
	a, b := f.Column("a"), f.Column("b")
	if f.Rows() != 17000-9 || len(a) != len(b) {
		t.Fatalf("%d rows, want %d", f.Rows(), 17000-9)
	}
	factor := a[0] / Ramp[9] // row 0 is step 9 of the ramp
	if factor < 0.5 || factor >= 1.5 {
		t.Fatalf("factor %v outside [0.5, 1.5)", factor)
	}
	for i := range a {
		if a[i] != factor*Ramp[(i+9)%17] {
			t.Fatalf("a[%d] = %v, want %v·%v", i, a[i], factor, Ramp[(i+9)%17])
		}
		if i >= 9 && b[i] != a[i-9] {
			t.Fatalf("b[%d] = %v, want a[%d] = %v", i, b[i], i-9, a[i-9])
		}
	}
	if b[0] != factor*1 { // b at step 9 is a at step 0
		t.Fatalf("b[0] = %v, want %v", b[0], factor)
	}
	again, _ := RampSeries(1000, 9, 3)
	other, _ := RampSeries(1000, 9, 4)
	if !slices.Equal(again.Column("a"), a) || other.Column("a")[0] == a[0] {
		t.Error("the series is not a function of its seed")
	}
	// Written to CSV and read back, it is the same.
	path := filepath.Join(t.TempDir(), "ramp.csv")
	if err := WriteCSV(path, f); err != nil {
		t.Fatal(err)
	}
	g, err := ReadCSV(path)
	if err != nil || !slices.Equal(g.Names, f.Names) || !slices.Equal(g.Column("a"), a) || !slices.Equal(g.Column("b"), b) {
		t.Fatalf("CSV round trip: %v", err)
	}
	for _, bad := range [][2]int{{0, 9}, {1, -1}, {1, 17}} {
		if _, err := RampSeries(bad[0], bad[1], 1); !errors.Is(err, tensor.ErrArgument) {
			t.Errorf("RampSeries(%d, %d) = %v, want ErrArgument", bad[0], bad[1], err)
		}
	}
}

func TestSeriesWindows(t *testing.T) {
	f := &Frame{Names: []string{"a", "b", "c"}, Columns: [][]float64{
		{0, 1, 2, 3, 4, 5}, {10, 11, 12, 13, 14, 15}, {20, 21, 22, 23, 24, 25},
	}}
	w, err := NewSeriesWindows(f, []string{"a", "c"}, []string{"b"}, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	if w.Len() != 3 {
		t.Fatalf("%d windows, want 3", w.Len())
	}
	l := newLoader(t, w, Config{BatchSize: 2})
	bt, _ := l.Next()
	defer bt.Release()
	x, y := bt.Tensors[0], bt.Tensors[1]
	if !slices.Equal(x.Shape(), []int{2, 3, 2}) || !slices.Equal(y.Shape(), []int{2, 1}) {
		t.Fatalf("shapes %v, %v", x.Shape(), y.Shape())
	}
	if got := x.Float32s(); !slices.Equal(got, []float32{0, 20, 1, 21, 2, 22, 1, 21, 2, 22, 3, 23}) {
		t.Errorf("inputs %v", got)
	}
	if got := y.Float32s(); !slices.Equal(got, []float32{13, 14}) { // one step after rows 2 and 3
		t.Errorf("targets %v", got)
	}
	for _, tc := range []struct {
		in, out       []string
		window, ahead int
	}{
		{[]string{"a"}, []string{"z"}, 2, 0},
		{nil, []string{"b"}, 2, 0},
		{[]string{"a"}, []string{"b"}, 0, 0},
		{[]string{"a"}, []string{"b"}, 2, -1},
		{[]string{"a"}, []string{"b"}, 6, 1},
	} {
		if _, err := NewSeriesWindows(f, tc.in, tc.out, tc.window, tc.ahead); !errors.Is(err, tensor.ErrArgument) {
			t.Errorf("NewSeriesWindows(%v, %v, %d, %d) = %v, want ErrArgument", tc.in, tc.out, tc.window, tc.ahead, err)
		}
	}
}

func TestDelay(t *testing.T) {
	d, err := Delay(50, 12, 4, 5, 8)
	if err != nil {
		t.Fatal(err)
	}
	in, out := make([]int32, 50*12), make([]int32, 50*12)
	d.Gather(0, identity(50), in)
	d.Gather(1, identity(50), out)
	var seen [4]int
	for s := range 50 {
		for t2 := range 12 {
			x, y := in[s*12+t2], out[s*12+t2]
			seen[x]++
			want := int32(0)
			if t2 >= 5 {
				want = in[s*12+t2-5]
			}
			if y != want {
				t.Fatalf("sequence %d step %d: target %d, want %d", s, t2, y, want)
			}
		}
	}
	if seen[0] != 0 || seen[1] < 150 || seen[2] < 150 || seen[3] < 150 {
		t.Errorf("symbol counts %v of 600, want none 0 and about 200 of each other", seen)
	}
	again, _ := Delay(50, 12, 4, 5, 8)
	in2 := make([]int32, 50*12)
	again.Gather(0, identity(50), in2)
	if !slices.Equal(in, in2) {
		t.Error("the task is not a function of its seed")
	}
	for _, bad := range [][4]int{{0, 12, 4, 5}, {1, 12, 1, 5}, {1, 5, 4, 5}, {1, 5, 4, -1}} {
		if _, err := Delay(bad[0], bad[1], bad[2], bad[3], 1); !errors.Is(err, tensor.ErrArgument) {
			t.Errorf("Delay%v = %v, want ErrArgument", bad, err)
		}
	}
}

// RaggedDelay cuts Delay's sequences (same seed, same symbols) to lengths
// spread over minLen … maxLen, zero past each length.
func TestRaggedDelay(t *testing.T) {
	d, err := RaggedDelay(60, 3, 12, 4, 2, 8)
	if err != nil {
		t.Fatal(err)
	}
	full, _ := Delay(60, 12, 4, 2, 8)
	in, out, lengths := make([]int32, 60*12), make([]int32, 60*12), make([]int32, 60)
	fin, fout := make([]int32, 60*12), make([]int32, 60*12)
	d.Gather(0, identity(60), in)
	d.Gather(1, identity(60), out)
	d.Gather(2, identity(60), lengths)
	full.Gather(0, identity(60), fin)
	full.Gather(1, identity(60), fout)
	lo, hi := int32(12), int32(0)
	for s, n := range lengths {
		lo, hi = min(lo, n), max(hi, n)
		for t2 := range 12 {
			wantIn, wantOut := fin[s*12+t2], fout[s*12+t2]
			if int32(t2) >= n {
				wantIn, wantOut = 0, 0
			}
			if in[s*12+t2] != wantIn || out[s*12+t2] != wantOut {
				t.Fatalf("sequence %d (length %d) step %d: %d→%d, want %d→%d", s, n, t2, in[s*12+t2], out[s*12+t2], wantIn, wantOut)
			}
		}
	}
	if lo != 3 || hi != 12 {
		t.Errorf("lengths span %d … %d of 60, want 3 … 12", lo, hi)
	}
	for _, bad := range [][3]int{{0, 3, 12}, {1, 0, 12}, {1, 13, 12}, {1, 3, 2}} {
		if _, err := RaggedDelay(bad[0], bad[1], bad[2], 4, 2, 1); !errors.Is(err, tensor.ErrArgument) {
			t.Errorf("RaggedDelay%v = %v, want ErrArgument", bad, err)
		}
	}
}
