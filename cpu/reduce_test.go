package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/layout"
)

// testFold returns the fold of the reduction op ("sum", "max" or "min")
// as the op table builds it: sums of floats accumulate in float64, int32
// sums wrap, max and min propagate NaN. vec adds the fast paths.
func testFold[T, A Number](op string, vec bool) Fold[T, A] {
	var f Fold[T, A]
	switch op {
	case "sum":
		f = Fold[T, A]{Add: func(a A, v T) A { return a + A(v) }, Merge: func(a, b A) A { return a + b }, Out: func(a A) T { return T(a) }}
		if vec {
			f.Vec = SumFoldVec[T, A]()
		}
		return f
	}
	isMax := op == "max"
	pick := func(a, v A) A {
		if isMax && v > a || !isMax && v < a || v != v {
			return v
		}
		return a
	}
	lo, hi := A(math.Inf(-1)), A(math.Inf(1))
	if isInt[A]() {
		lo, hi = math.MinInt32, math.MaxInt32
	}
	if !isMax {
		lo = hi
	}
	f = Fold[T, A]{Identity: lo, Add: func(a A, v T) A { return pick(a, A(v)) }, Merge: pick, Out: func(a A) T { return T(a) }}
	if vec {
		var v any
		if isMax {
			v = MaxFoldVec[T]()
		} else {
			v = MinFoldVec[T]()
		}
		f.Vec = v.(FoldVec[T, A])
	}
	return f
}

// reduceVec tells reduceBy to use the fast paths.
var reduceVec = true

// reduceBy runs Reduce with the fold of op (see testFold).
func reduceBy[T Number](op string, dst []T, dl Layout, x []T, xl Layout) {
	if op == "sum" && !isInt[T]() {
		Reduce(testFold[T, float64](op, reduceVec), dst, dl, x, xl)
		return
	}
	Reduce(testFold[T, T](op, reduceVec), dst, dl, x, xl)
}

// betterFor returns ArgReduce's comparison for op ("max" or "min"):
// strict, with NaN beating every number.
func betterFor[T Number](op string) func(v, best T) bool {
	if op == "max" {
		return func(v, best T) bool { return v > best || (v != v && best == best) }
	}
	return func(v, best T) bool { return v < best || (v != v && best == best) }
}

// reduceOps are the reductions the tests run.
var reduceOps = []string{"sum", "max", "min"}

// refReduce reduces x (read through xl) over the dims where keep is
// false, in float64 (int32 sums wrap like int32); it returns the results
// in row-major keepdim order and the sums of |x| (a scale for tolerances).
func refReduce[T Number](op string, x []T, xl Layout, keep []bool) (out, scale []float64) {
	ks := keepShape(xl.Shape, keep)
	n := layout.Numel(ks)
	out, scale = make([]float64, n), make([]float64, n)
	seen := make([]bool, n)
	var isum = make([]int32, n)
	oi := make([]int, len(ks))
	forEach(xl.Shape, func(idx []int) {
		for d := range idx {
			oi[d] = idx[d]
			if !keep[d] {
				oi[d] = 0
			}
		}
		f := flatIndex(ks, oi)
		v := x[at(xl, idx)]
		fv := f64(v)
		scale[f] += math.Abs(fv)
		switch op {
		case "sum":
			out[f] += fv
			isum[f] += int32(fv)
		case "max":
			if !seen[f] || fv > out[f] || math.IsNaN(fv) && !math.IsNaN(out[f]) {
				out[f] = fv
			}
		case "min":
			if !seen[f] || fv < out[f] || math.IsNaN(fv) && !math.IsNaN(out[f]) {
				out[f] = fv
			}
		}
		seen[f] = true
	})
	if op == "sum" && isInt[T]() {
		for i := range out {
			out[i] = float64(isum[i])
		}
	}
	return out, scale
}

func keepShape(shape []int, keep []bool) []int {
	ks := append([]int(nil), shape...)
	for d := range ks {
		if !keep[d] {
			ks[d] = 1
		}
	}
	return ks
}

func checkReduce[T Number](t *testing.T, r *rand.Rand, op string, shape []int, keep []bool, xk, dk string, nan bool) {
	t.Helper()
	xl, xn := makeLayout(r, shape, xk)
	x := make([]T, xn)
	randFill(r, x)
	if nan && !isInt[T]() && xl.NumElements() > 0 {
		for i := 0; i < 3; i++ {
			x[r.IntN(len(x))] = T(math.NaN())
		}
	}
	dl, _ := makeLayout(r, keepShape(shape, keep), dk)
	dst := newOut[T](dl)
	reduceBy(op, dst, dl, x, xl)
	want, scale := refReduce(op, x, xl, keep)
	name := fmt.Sprintf("%T %s vec %v %v keep%v x:%s d:%s", x, op, reduceVec, shape, keep, xk, dk)
	checkUntouched(t, name, dst, dl)
	i := 0
	forEach(dl.Shape, func(idx []int) {
		got := f64(dst[at(dl, idx)])
		if !approx.Abs(tolFor[T]()*max(scale[i], 1)).Equal(got, want[i]) {
			t.Fatalf("%s: out %v = %v, want %v", name, idx, got, want[i])
		}
		i++
	})
	if len(dl.Shape) == 0 && !approx.Abs(tolFor[T]()*max(scale[0], 1)).Equal(f64(dst[dl.Offset]), want[0]) {
		t.Fatalf("%s: got %v, want %v", name, dst[dl.Offset], want[0])
	}
}

// subsets returns every keep mask of a rank (all 2^rank of them).
func subsets(rank int) [][]bool {
	var out [][]bool
	for m := 0; m < 1<<rank; m++ {
		k := make([]bool, rank)
		for d := range k {
			k[d] = m>>d&1 == 1
		}
		out = append(out, k)
	}
	return out
}

func testReduceType[T Number](t *testing.T) {
	r := newRand(1)
	for _, op := range reduceOps {
		for _, shape := range oddShapes {
			for _, keep := range subsets(len(shape)) {
				for _, xk := range inKinds {
					for _, dk := range outKinds {
						checkReduce[T](t, r, op, shape, keep, xk, dk, false)
					}
				}
			}
		}
		// Large: the parallel paths (split outputs, split reduced extent,
		// side-by-side columns).
		for _, shape := range [][]int{{1<<16 + 7}, {3, 20001}, {20001, 3}, {257, 131}, {65, 33, 17}, {2, 33000}} {
			for _, keep := range subsets(len(shape)) {
				for _, xk := range []string{kContig, kPerm, kStep} {
					checkReduce[T](t, r, op, shape, keep, xk, kContig, false)
				}
			}
		}
	}
}

func TestReduce(t *testing.T) {
	for _, vec := range []bool{true, false} {
		reduceVec = vec
		t.Run(fmt.Sprint("float32 vec ", vec), testReduceType[float32])
		t.Run(fmt.Sprint("float64 vec ", vec), testReduceType[float64])
		t.Run(fmt.Sprint("int32 vec ", vec), testReduceType[int32])
	}
	reduceVec = true
}

func TestReduceNaN(t *testing.T) {
	r := newRand(2)
	for _, op := range reduceOps {
		for _, shape := range [][]int{{7, 33}, {65}, {300, 257}, {1 << 16}} {
			for _, keep := range subsets(len(shape)) {
				checkReduce[float32](t, r, op, shape, keep, kContig, kContig, true)
				checkReduce[float64](t, r, op, shape, keep, kPerm, kContig, true)
			}
		}
	}
	// NaN first, NaN last, and -Inf/+Inf without NaN.
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	for _, c := range []struct {
		x        []float32
		max, min float32
	}{
		{[]float32{nan, 1, 2}, nan, nan},
		{[]float32{1, 2, nan}, nan, nan},
		{[]float32{-inf, 3, inf}, inf, -inf},
		{[]float32{-inf}, -inf, -inf},
	} {
		for _, op := range []string{"max", "min"} {
			d := []float32{0}
			reduceBy(op, d, Contiguous(1), c.x, Contiguous(len(c.x)))
			want := c.max
			if op == "min" {
				want = c.min
			}
			if !approx.Exact.Equal(float64(d[0]), float64(want)) {
				t.Errorf("%s of %v = %v, want %v", op, c.x, d[0], want)
			}
		}
	}
}

func TestReduceEmptyAndWrap(t *testing.T) {
	// An empty reduced extent gives the identity: 0 for sums.
	d := []float32{5, 5, 5}
	reduceBy("sum", d, Contiguous(3, 1), []float32{}, Contiguous(3, 0))
	if d[0] != 0 || d[1] != 0 || d[2] != 0 {
		t.Fatalf("empty sum = %v", d)
	}
	reduceBy("max", d, Contiguous(3, 1), []float32{}, Contiguous(3, 0))
	if !math.IsInf(float64(d[1]), -1) {
		t.Fatalf("empty max = %v, want the identity -Inf", d)
	}
	// An empty kept extent writes nothing.
	reduceBy("sum", d, Contiguous(0, 1), []float32{}, Contiguous(0, 4))
	// int32 sums wrap in int32.
	x := []int32{math.MaxInt32, 1, math.MaxInt32, 5}
	di := []int32{0}
	reduceBy("sum", di, Contiguous(1), x, Contiguous(4))
	if want := int32(int64(math.MaxInt32)*2 + 6 - 1<<32); di[0] != want {
		t.Fatalf("int32 sum = %d, want %d", di[0], want)
	}
	// A float32 sum accumulates in float64: 1 + 2^24 ones is exact.
	big := make([]float32, 1<<24+1)
	for i := range big {
		big[i] = 1
	}
	df := []float32{0}
	reduceBy("sum", df, Contiguous(1), big, Contiguous(len(big)))
	if df[0] != float32(1<<24) { // 2^24+1 rounds to 2^24 only once, at the end
		t.Fatalf("float32 sum of 2^24+1 ones = %v", df[0])
	}
	big[0] = 0.5
	reduceBy("sum", df, Contiguous(1), big, Contiguous(len(big)))
	if want := float32(float64(1<<24) + 0.5); df[0] != want {
		t.Fatalf("float32 sum = %v, want %v", df[0], want)
	}
}

// refArg is the reference arg-reduction of one line.
func refArg(line []float64, isMax bool) (int, float64) {
	bi, b := 0, line[0]
	for k, v := range line[1:] {
		if math.IsNaN(b) {
			break
		}
		if math.IsNaN(v) || isMax && v > b || !isMax && v < b {
			bi, b = k+1, v
		}
	}
	return bi, b
}

func testArgReduceType[T Number](t *testing.T) {
	r := newRand(3)
	shapes := append(append([][]int(nil), oddShapes...), []int{300, 257}, []int{3, 20001}, []int{20001, 3})
	for _, shape := range shapes {
		rank := max(len(shape), 1)
		for dim := 0; dim < rank; dim++ {
			for _, xk := range inKinds {
				for _, op := range []string{"max", "min"} {
					xl, xn := makeLayout(r, shape, xk)
					x := make([]T, xn)
					for i := range x { // few distinct values: many ties
						x[i] = T(r.IntN(7) - 3)
						if !isInt[T]() && r.IntN(50) == 0 {
							x[i] = T(math.NaN())
						}
					}
					ks := append([]int(nil), shape...)
					if len(ks) > 0 {
						ks[dim] = 1
					}
					il, _ := makeLayout(r, ks, kPerm)
					vl, _ := makeLayout(r, ks, kStep)
					idx, vals := newOut[int32](il), newOut[T](vl)
					useVals := r.IntN(4) != 0
					if !useVals {
						vals = nil
					}
					ArgReduce(betterFor[T](op), vals, vl, idx, il, x, xl, dim)
					name := fmt.Sprintf("%T %s %v dim%d %s", x, op, shape, dim, xk)
					checkUntouched(t, name, idx, il)
					length := 1
					if len(shape) > 0 {
						length = shape[dim]
					}
					oi := make([]int, len(shape))
					forEach(ks, func(o []int) {
						line := make([]float64, length)
						copy(oi, o)
						for k := range line {
							if len(oi) > 0 {
								oi[dim] = k
							}
							line[k] = f64(x[at(xl, oi)])
						}
						wi, wv := refArg(line, op == "max")
						if got := idx[at(il, o)]; int(got) != wi {
							t.Fatalf("%s: at %v index %d, want %d (line %v)", name, o, got, wi, line)
						}
						if vals != nil && !approx.Exact.Equal(f64(vals[at(vl, o)]), wv) {
							t.Fatalf("%s: at %v value %v, want %v", name, o, vals[at(vl, o)], wv)
						}
					})
					if len(shape) == 0 && idx[il.Offset] != 0 {
						t.Fatalf("0-d argmax = %d", idx[il.Offset])
					}
				}
			}
		}
	}
}

func TestArgReduce(t *testing.T) {
	t.Run("float32", testArgReduceType[float32])
	t.Run("float64", testArgReduceType[float64])
	t.Run("int32", testArgReduceType[int32])
	// First NaN wins for both max and min; ties go to the first.
	nan := math.NaN()
	x := []float64{1, 3, nan, 3, nan}
	for _, op := range []string{"max", "min"} {
		idx := []int32{-1}
		ArgReduce(betterFor[float64](op), nil, Contiguous(1), idx, Contiguous(1), x, Contiguous(5), 0)
		if idx[0] != 2 {
			t.Errorf("%s: index %d, want 2", op, idx[0])
		}
	}
	y := []int32{2, 5, 1, 5, 1}
	idx := []int32{-1, -1}
	ArgReduce(betterFor[int32]("max"), nil, Contiguous(1), idx[:1], Contiguous(1), y, Contiguous(5), 0)
	ArgReduce(betterFor[int32]("min"), nil, Contiguous(1), idx[1:], Contiguous(1), y, Contiguous(5), 0)
	if idx[0] != 1 || idx[1] != 2 {
		t.Errorf("ties: argmax %d argmin %d, want 1 2", idx[0], idx[1])
	}
}
