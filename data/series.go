package data

import (
	"math/rand/v2"

	"github.com/tessera-ml/tessera/tensor"
)

// Ramp is one period of RampSeries's column "a": 1 up to 9 and back down
// to 1.
var Ramp = []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 8, 7, 6, 5, 4, 3, 2, 1}

// RampSeries returns the synthetic series of the pandas example that
// issue 8 names: column "a" is Ramp repeated repeats times (1000 in the
// example); column "b" is "a" shifted down by shift steps (pandas'
// df.a.shift(shift), 9 in the example), so that b[t] = a[t-shift]; the
// first shift rows, where "b" has no value (NaN in pandas), are dropped,
// as dropna would; and both columns are multiplied by one random factor
// drawn uniformly from [0.5, 1.5) by PCG-DXSM seeded with (seed, a fixed
// stream), the same for a seed on every machine. It returns a
// *tensor.Error wrapping ErrArgument when repeats < 1 or shift is
// negative or leaves no row.
func RampSeries(repeats, shift int, seed uint64) (*Frame, error) {
	n := repeats * len(Ramp)
	if repeats < 1 || shift < 0 || shift >= n {
		return nil, argErr("RampSeries", tensor.ErrArgument, "%d repeats of %d steps shifted by %d leave no row", repeats, len(Ramp), shift)
	}
	factor := 0.5 + unit(rand.NewPCG(seed, streamRamp))
	a := make([]float64, 0, n-shift)
	b := make([]float64, 0, n-shift)
	for t := shift; t < n; t++ {
		a = append(a, factor*Ramp[t%len(Ramp)])
		b = append(b, factor*Ramp[(t-shift)%len(Ramp)])
	}
	return &Frame{Names: []string{"a", "b"}, Columns: [][]float64{a, b}}, nil
}

// SeriesWindows is a Dataset of sliding windows over the rows of a
// Frame: example i has as input the rows i … i+Window-1 of the input
// columns, float32 [Window, len(inputs)], and as target the row
// i+Window-1+Ahead of the target columns, float32 [len(targets)]. Ahead 0
// asks for the targets at the window's last step (b from a window of a
// in RampSeries), Ahead 1 for the step after it (forecasting).
type SeriesWindows struct {
	in, out              [][]float64
	window, ahead, count int
}

// NewSeriesWindows returns the sliding windows of window rows of f's
// columns named inputs, with targets from its columns named targets,
// ahead steps after each window's last row. It returns a *tensor.Error
// wrapping ErrArgument for an unknown or missing column name, a window
// below 1, a negative ahead, or a frame too short for one example, and
// the errors of a malformed Frame (see WriteCSV).
func NewSeriesWindows(f *Frame, inputs, targets []string, window, ahead int) (*SeriesWindows, error) {
	const op = "NewSeriesWindows"
	if err := f.check(op); err != nil {
		return nil, err
	}
	w := &SeriesWindows{window: window, ahead: ahead, count: f.Rows() - window - ahead + 1}
	switch {
	case len(inputs) == 0 || len(targets) == 0:
		return nil, argErr(op, tensor.ErrArgument, "inputs %q and targets %q must each name a column", inputs, targets)
	case window < 1 || ahead < 0:
		return nil, argErr(op, tensor.ErrArgument, "window %d must be at least 1 and ahead %d not negative", window, ahead)
	case w.count < 1:
		return nil, argErr(op, tensor.ErrArgument, "%d rows are too few for a window of %d and a target %d ahead", f.Rows(), window, ahead)
	}
	for _, names := range []struct {
		list []string
		to   *[][]float64
	}{{inputs, &w.in}, {targets, &w.out}} {
		for _, name := range names.list {
			c := f.Column(name)
			if c == nil {
				return nil, argErr(op, tensor.ErrArgument, "no column %q among %q", name, f.Names)
			}
			*names.to = append(*names.to, c)
		}
	}
	return w, nil
}

// Len returns the number of windows.
func (w *SeriesWindows) Len() int { return w.count }

// Fields returns the input, float32 [Window, inputs], and the target,
// float32 [targets].
func (w *SeriesWindows) Fields() []Field {
	return []Field{{tensor.Float32, []int{w.window, len(w.in)}}, {tensor.Float32, []int{len(w.out)}}}
}

// Gather writes the inputs (f = 0) or targets (f = 1) of windows idx.
func (w *SeriesWindows) Gather(f int, idx []int, dst any) {
	out := dst.([]float32)
	k := 0
	for _, i := range idx {
		if f == 1 {
			for _, c := range w.out {
				out[k] = float32(c[i+w.window-1+w.ahead])
				k++
			}
			continue
		}
		for t := i; t < i+w.window; t++ {
			for _, c := range w.in {
				out[k] = float32(c[t])
				k++
			}
		}
	}
}

// Delay returns the delay task of the lstm example: n sequences of length
// random symbols, int32 [n, length], drawn uniformly from 1 … symbols-1
// by PCG-DXSM seeded with (seed, a fixed stream), and as targets the same
// sequences delayed by delay steps, int32 [n, length]: target[t] =
// input[t-delay], and 0 (a symbol no input holds, "nothing yet") for
// t < delay. It returns a *tensor.Error wrapping ErrArgument unless
// n ≥ 1, length ≥ 1, symbols ≥ 2 and 0 ≤ delay < length.
func Delay(n, length, symbols, delay int, seed uint64) (*InMemory, error) {
	if err := checkDelay("Delay", n, length, symbols, delay); err != nil {
		return nil, err
	}
	in, out := delaySeqs(n, length, symbols, delay, seed)
	return NewInMemory(Col(in, n, length), Col(out, n, length))
}

// checkDelay returns op's *tensor.Error unless n ≥ 1, length ≥ 1,
// symbols ≥ 2 and 0 ≤ delay < length.
func checkDelay(op string, n, length, symbols, delay int) error {
	if n < 1 || length < 1 || symbols < 2 || delay < 0 || delay >= length {
		return argErr(op, tensor.ErrArgument, "%d sequences of length %d, %d symbols, delay %d: want n ≥ 1, length ≥ 1, symbols ≥ 2, 0 ≤ delay < length",
			n, length, symbols, delay)
	}
	return nil
}

// delaySeqs returns Delay's inputs and targets, [n·length] each.
func delaySeqs(n, length, symbols, delay int, seed uint64) (in, out []int32) {
	r := rand.NewPCG(seed, streamDelay)
	in = make([]int32, n*length)
	out = make([]int32, n*length)
	for s := range n {
		seq, tgt := in[s*length:(s+1)*length], out[s*length:(s+1)*length]
		for t := range seq {
			seq[t] = 1 + int32(uniform(r, uint64(symbols-1)))
		}
		copy(tgt[delay:], seq)
	}
	return in, out
}

// RaggedDelay is Delay with sequences of different lengths, for packed
// (ragged) batches: n sequences of maxLen steps as Delay draws them
// (same seed, same symbols), each cut to a length drawn uniformly from
// minLen … maxLen by a second PCG-DXSM stream, with input and target
// zero past the length, and the lengths as a third column, int32 [n].
// It returns a *tensor.Error wrapping ErrArgument for Delay's bad
// arguments or unless 1 ≤ minLen ≤ maxLen.
func RaggedDelay(n, minLen, maxLen, symbols, delay int, seed uint64) (*InMemory, error) {
	if minLen < 1 || minLen > maxLen {
		return nil, argErr("RaggedDelay", tensor.ErrArgument, "lengths %d … %d: want 1 ≤ minLen ≤ maxLen", minLen, maxLen)
	}
	if err := checkDelay("RaggedDelay", n, maxLen, symbols, delay); err != nil {
		return nil, err
	}
	in, out := delaySeqs(n, maxLen, symbols, delay, seed)
	r := rand.NewPCG(seed, streamRaggedDelay)
	lengths := make([]int32, n)
	for s := range n {
		lengths[s] = int32(minLen + int(uniform(r, uint64(maxLen-minLen+1))))
		clear(in[s*maxLen+int(lengths[s]) : (s+1)*maxLen])
		clear(out[s*maxLen+int(lengths[s]) : (s+1)*maxLen])
	}
	return NewInMemory(Col(in, n, maxLen), Col(out, n, maxLen), Col(lengths, n))
}
