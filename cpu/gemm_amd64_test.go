package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// Matrix kinds for the sgemm tests: how a rows×cols matrix lies in its
// buffer.
const (
	gRow  = "row"  // row-major, contiguous
	gCol  = "col"  // column-major (a transposed operand)
	gPad  = "pad"  // row-major with a row stride past the end of the row, at an offset, and room for whole 16-column panels
	gStep = "step" // both strides stepped (neither rows nor columns contiguous)
)

var gKinds = []string{gRow, gCol, gPad, gStep}

// gemmMat returns a rows×cols matrix of the given kind in a fresh buffer,
// which is filled with N(0, 1) values and NaN where the matrix does not
// reach (no product may read them into C), or, when out is set, with the
// sentinel.
func gemmMat(r *rand.Rand, rows, cols int, kind string, out bool) f32Mat {
	return gemmMatT[float32](r, rows, cols, kind, out)
}

// gemmMatT is gemmMat for any element type.
func gemmMatT[T Float](r *rand.Rand, rows, cols int, kind string, out bool) mat[T] {
	var v mat[T]
	switch kind {
	case gRow:
		v = mat[T]{rs: cols, cs: 1}
	case gCol:
		v = mat[T]{rs: 1, cs: rows}
	case gPad:
		v = mat[T]{off: 3, rs: cols + 21, cs: 1}
	case gStep:
		v = mat[T]{off: 1, rs: 2 * cols, cs: 2}
	default:
		panic(kind)
	}
	extra := 2
	if kind == gPad {
		extra = 18 // the last row's whole panels: B is read in place
	}
	v.data = make([]T, v.off+(rows-1)*v.rs+(cols-1)*v.cs+1+extra)
	for i := range v.data {
		if out {
			v.data[i] = sentinel[T]()
		} else {
			v.data[i] = T(math.NaN())
		}
	}
	if !out {
		for i := range rows {
			for j := range cols {
				v.data[v.off+i*v.rs+j*v.cs] = T(r.NormFloat64())
			}
		}
	}
	return v
}

func (v mat[T]) get(i, j int) T { return v.data[v.off+i*v.rs+j*v.cs] }

// checkGemm fails unless c holds a·b, to within ε·√k·max|a_i·|·max|b_·j|
// per element (ε = 1e-5 for float32, 1e-14 for float64), and the rest of
// c's buffer still holds the sentinel.
func checkGemm[T Float](t *testing.T, name string, m, n, k int, a, b, c mat[T]) {
	t.Helper()
	rowMax, colMax := make([]float64, m), make([]float64, n)
	for i := range m {
		for l := range k {
			rowMax[i] = math.Max(rowMax[i], math.Abs(float64(a.get(i, l))))
		}
	}
	for j := range n {
		for l := range k {
			colMax[j] = math.Max(colMax[j], math.Abs(float64(b.get(l, j))))
		}
	}
	in := make([]bool, len(c.data))
	for i := range m {
		for j := range n {
			in[c.off+i*c.rs+j*c.cs] = true
			var s float64
			for l := range k {
				s += float64(a.get(i, l)) * float64(b.get(l, j))
			}
			got := float64(c.get(i, j))
			eps := 1e-5
			if unsafe.Sizeof(T(0)) == 8 {
				eps = 1e-14
			}
			if tol := eps * math.Sqrt(float64(k)) * rowMax[i] * colMax[j]; !(math.Abs(got-s) <= tol) {
				t.Fatalf("%s: c[%d,%d] = %v, want %v (tolerance %.3g)", name, i, j, got, s, tol)
			}
		}
	}
	for i, v := range c.data {
		if !in[i] && v != sentinel[T]() {
			t.Fatalf("%s: element %d of c's buffer, outside the matrix, was written (%v)", name, i, v)
		}
	}
}

// runGemm checks sgemm on one shape and layout, serially and split in two.
func runGemm(t *testing.T, r *rand.Rand, m, n, k int, ak, bk, ck string) {
	t.Helper()
	runGemmT(t, r, sgemm, m, n, k, ak, bk, ck)
}

// runGemmT is runGemm for any element type and GEMM.
func runGemmT[T Float](t *testing.T, r *rand.Rand, gemm func(m, n, k int, a, b, c mat[T], parts int), m, n, k int, ak, bk, ck string) {
	t.Helper()
	a, b := gemmMatT[T](r, m, k, ak, false), gemmMatT[T](r, k, n, bk, false)
	for _, parts := range []int{1, 2} {
		c := gemmMatT[T](r, m, n, ck, true)
		name := fmt.Sprintf("m%d n%d k%d a:%s b:%s c:%s parts %d", m, n, k, ak, bk, ck, parts)
		gemm(m, n, k, a, b, c, parts)
		checkGemm(t, name, m, n, k, a, b, c)
	}
}

func skipNoSgemm(t *testing.T) {
	if !sgemmAsm {
		t.Skip("no AVX2 and FMA: the assembly GEMM is not used")
	}
}

// eachSgemmKernel runs f as a subtest with the AVX2 kernel and, where the
// CPU has AVX-512, again with the AVX-512 kernels.
func eachSgemmKernel(t *testing.T, f func(t *testing.T)) {
	skipNoSgemm(t)
	defer func(on bool) { sgemmAVX512 = on }(sgemmAVX512)
	for _, z := range []bool{false, true} {
		if z && !cpuAVX512 {
			t.Log("no AVX-512: only the AVX2 kernel is tested")
			continue
		}
		sgemmAVX512 = z
		t.Run(fmt.Sprintf("avx512=%v", z), f)
	}
}

func TestSgemmShapes(t *testing.T) {
	eachSgemmKernel(t, func(t *testing.T) {
		r := newRand(11)
		sizes := []int{1, 2, 5, 7, 15, 16, 17, 33, 65, 127, 255, 256, 257}
		// Square products, each in every operand kind.
		for i, s := range sizes {
			for j, ak := range gKinds {
				runGemm(t, r, s, s, s, ak, gKinds[(i+j)%4], gKinds[(i+2*j)%4])
			}
		}
		// All small shapes, cycling the kinds.
		small := []int{1, 2, 5, 6, 7, 15, 16, 17, 33}
		i := 0
		for _, m := range small {
			for _, n := range small {
				for _, k := range small {
					runGemm(t, r, m, n, k, gKinds[i%4], gKinds[(i/4)%4], gKinds[(i/16)%4])
					i++
				}
			}
		}
		// Larger non-square shapes, K = 1, and the edges of the cache blocks
		// (K past gemmKC, M past gemmMC, N past a column split).
		for _, s := range [][3]int{
			{257, 33, 300}, {5, 300, 129}, {300, 7, 1}, {1, 400, 65}, {400, 1, 65},
			{65, 127, 1}, {127, 65, 513}, {193, 40, 256}, {385, 17, 257},
			{12, 4100, 3}, {6, 16, 600}, {200, 150, 70}, {1, 1, 1000},
		} {
			for j, ak := range gKinds {
				runGemm(t, r, s[0], s[1], s[2], ak, gKinds[(j+1)%4], gKinds[(j+3)%4])
			}
		}
	})
}

// TestSgemmSharedBlocks shrinks the packed shared operand so that it is
// packed block by block, for both ways of sharing.
func TestSgemmSharedBlocks(t *testing.T) {
	eachSgemmKernel(t, func(t *testing.T) {
		defer func(s int) { gemmShared = s }(gemmShared)
		gemmShared = 12000 // 3000 float32
		r := newRand(15)
		for _, s := range [][3]int{{150, 100, 40}, {100, 150, 40}, {70, 33, 300}, {33, 70, 300}, {61, 200, 7}} {
			for j, ak := range gKinds {
				runGemm(t, r, s[0], s[1], s[2], ak, gKinds[(j+2)%4], gKinds[(j+1)%4])
			}
		}
	})
}

// TestGemmRun checks that every unit runs once, whatever the number of
// goroutines, and that a panic in a unit reaches the caller after the
// other units have run.
func TestGemmRun(t *testing.T) {
	for _, workers := range []int{1, 2, 3, 8} {
		for _, total := range []int{1, 2, 7, 100} {
			counts := make([]atomic.Int32, total)
			runUnits(workers, total, func(u int) { counts[u].Add(1) })
			for u := range counts {
				if c := counts[u].Load(); c != 1 {
					t.Fatalf("workers %d, %d units: unit %d ran %d times", workers, total, u, c)
				}
			}
		}
	}
	var ran atomic.Int32
	func() {
		defer func() {
			if r := recover(); r != "unit 3" {
				t.Fatalf("recovered %v, want the panic of unit 3", r)
			}
			if ran.Load() != 9 {
				t.Fatalf("%d units ran to the end, want 9", ran.Load())
			}
		}()
		runUnits(2, 10, func(u int) {
			if u == 3 {
				panic("unit 3")
			}
			ran.Add(1)
		})
	}()
}

// TestGemmRunHelpers runs products from several goroutines at once, the
// helpers spinning between them and sleeping at once, and checks that
// every unit of every product runs once and that none waits forever.
func TestGemmRunHelpers(t *testing.T) {
	for _, spin := range []time.Duration{0, workerSpinFor} {
		func() {
			defer workerSpin.Store(workerSpin.Load())
			workerSpin.Store(int64(spin))
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 50 {
						total := 1 + (g*7+i)%40
						counts := make([]atomic.Int32, total)
						runUnits(2+g%2, total, func(u int) { counts[u].Add(1) })
						for u := range counts {
							if c := counts[u].Load(); c != 1 {
								t.Errorf("spin %v, goroutine %d, product %d: unit %d ran %d times", spin, g, i, u, c)
								return
							}
						}
						if i%10 == 0 {
							time.Sleep(time.Duration(i) * time.Microsecond) // let the helpers go to sleep
						}
					}
				}()
			}
			wg.Wait()
		}()
	}
}

// TestSgemmMatchesGonum runs MatMul on float32 through the assembly GEMM
// and through gonum and compares the two.
func TestSgemmMatchesGonum(t *testing.T) {
	eachSgemmKernel(t, func(t *testing.T) {
		matchesGonum[float32](t, newRand(12), &sgemmAsm, 2e-5, [][4]int{
			{1, 64, 64, 64}, {1, 130, 129, 257}, {3, 17, 33, 65}, {2, 256, 255, 7},
			{96, 9, 10, 11}, {1, 1, 300, 40}, {1, 300, 1, 40}, {4, 100, 70, 300},
		})
	})
}

// matchesGonum runs batched MatMul on T with the package's GEMM and, with
// *on cleared, through gonum, over the shapes (batches, m, n, k) and
// every operand layout (broadcast and strided batches included), and
// fails unless the two agree to tol·√k relative.
func matchesGonum[T Float](t *testing.T, r *rand.Rand, on *bool, tol float64, shapes [][4]int) {
	t.Helper()
	defer func(v bool) { *on = v }(*on)
	kinds := []string{mRow, mCol, mBMid, mStep, mBcast, mBStep}
	for i, s := range shapes {
		for j, ak := range kinds {
			nb, m, n, k := s[0], s[1], s[2], s[3]
			bk, dk := kinds[(i+j+1)%6], kinds[(i+2*j)%4]
			al, an := matLayout(r, nb, m, k, ak)
			bl, bn := matLayout(r, nb, k, n, bk)
			dl, _ := matLayout(r, nb, m, n, dk)
			a, bm := make([]T, an), make([]T, bn)
			randFill(r, a)
			randFill(r, bm)
			got, want := newOut[T](dl), newOut[T](dl)
			*on = true
			MatMul(got, dl, a, al, bm, bl)
			*on = false
			MatMul(want, dl, a, al, bm, bl)
			for e := range got {
				g, w := float64(got[e]), float64(want[e])
				if d := math.Abs(g - w); !(d <= tol*math.Sqrt(float64(k))*math.Max(1, math.Abs(w))) {
					t.Fatalf("b%d m%d n%d k%d a:%s b:%s d:%s: element %d = %v, gonum %v", nb, m, n, k, ak, bk, dk, e, g, w)
				}
			}
		}
	}
}

// TestSgemmNaNInf checks that a NaN or an Inf in an operand reaches the
// elements of C it contributes to, 0·Inf included, and no others.
func TestSgemmNaNInf(t *testing.T) {
	eachSgemmKernel(t, func(t *testing.T) {
		checkNaNInf(t, [][3]int{{20, 40, 300}, {6, 16, 8}, {1, 1, 1}, {7, 33, 5}})
	})
}

// checkNaNInf checks sgemm's NaN and Inf propagation (see TestSgemmNaNInf)
// on the m×n×k shapes, A row-major and B column-major.
func checkNaNInf(t *testing.T, shapes [][3]int) {
	t.Helper()
	r := newRand(13)
	for _, s := range shapes {
		m, n, k := s[0], s[1], s[2]
		a, b := gemmMat(r, m, k, gRow, false), gemmMat(r, k, n, gCol, false)
		ia, la := m/2, k-1 // a[ia, la] = NaN: row ia of c is NaN
		a.data[a.off+ia*a.rs+la*a.cs] = float32(math.NaN())
		jb, lb := n-1, k/2 // b[lb, jb] = +Inf and a[·, lb] = 0 in row iz
		b.data[b.off+lb*b.rs+jb*b.cs] = float32(math.Inf(1))
		iz := (ia + 1) % m
		for l := range k {
			if iz != ia {
				a.data[a.off+iz*a.rs+l*a.cs] = 1
			}
		}
		if iz != ia {
			a.data[a.off+iz*a.rs+lb*a.cs] = 0
		}
		c := gemmMat(r, m, n, gRow, true)
		sgemm(m, n, k, a, b, c, 2)
		for i := range m {
			for j := range n {
				v := float64(c.get(i, j))
				switch {
				case i == ia || (i == iz && j == jb): // NaN·x, or 0·Inf
					if !math.IsNaN(v) {
						t.Fatalf("m%d n%d k%d: c[%d,%d] = %v, want NaN", m, n, k, i, j, v)
					}
				case j == jb:
					if !math.IsInf(v, 0) {
						t.Fatalf("m%d n%d k%d: c[%d,%d] = %v, want ±Inf", m, n, k, i, j, v)
					}
				default:
					if math.IsNaN(v) || math.IsInf(v, 0) {
						t.Fatalf("m%d n%d k%d: c[%d,%d] = %v, want finite", m, n, k, i, j, v)
					}
				}
			}
		}
	}
}

// TestSplitFor checks that the blocks cut n evenly for the goroutines:
// on multiples of unit, covering n without gaps in a number of blocks
// that is a multiple of parts, none more than a unit larger than another
// nor past most, give or take a unit.
func TestSplitFor(t *testing.T) {
	for _, c := range [][4]int{{2048, 2, 192, 6}, {1024, 2, 192, 6}, {256, 2, 192, 6}, {1000, 3, 192, 6}, {100, 2, 192, 6},
		{4096, 2, 4096, 64}, {784, 2, 4096, 64}, {700, 1, 192, 6}, {5, 2, 192, 6}} {
		n, parts, most, unit := c[0], c[1], c[2], c[3]
		s := splitFor(n, parts, gemmUnitsPerWorker, most, unit)
		units := (n + unit - 1) / unit
		if parts > 1 && units >= parts*gemmUnitsPerWorker && s.count%parts != 0 {
			t.Errorf("splitFor(%d, %d, %d, %d): %d blocks", n, parts, most, unit, s.count)
		}
		end, small, large := 0, n, 0
		for u := range s.count {
			lo, hi := s.block(u)
			if lo != end || lo%unit != 0 || hi <= lo {
				t.Fatalf("splitFor(%d, %d, %d, %d): block %d is [%d, %d) after %d", n, parts, most, unit, u, lo, hi, end)
			}
			end = hi
			if hi < n {
				small = min(small, hi-lo)
			}
			large = max(large, hi-lo)
		}
		if end != n || (small < n && large-small > unit) || large > s.most() || s.most() > most+unit {
			t.Errorf("splitFor(%d, %d, %d, %d): blocks of %d to %d (most %d) up to %d", n, parts, most, unit, small, large, s.most(), end)
		}
	}
	if s := splitFor(256, 2, gemmUnitsPerWorker, 192, 6); s.count != 8 || s.most() != 36 {
		t.Errorf("splitFor(256, 2, 192, 6) = %d blocks of up to %d rows, want 8 of up to 36", s.count, s.most())
	}
}

// TestSgemmKitFollowsBlocking checks that the kits built once at start-up
// (float32 and float64) give way to ones with the blocking a benchmark
// sets.
func TestSgemmKitFollowsBlocking(t *testing.T) {
	if !cpuAVX512 {
		t.Skip("no AVX-512")
	}
	defer func(direct, on bool) { gemmDirectA, sgemmAVX512 = direct, on }(gemmDirectA, sgemmAVX512)
	sgemmAVX512 = true
	if k := sgemmKit(); k != sgemmKitZ {
		t.Fatalf("sgemmKit() built a kit with the blocking unchanged")
	}
	if k := dgemmKit(); k != dgemmKitZ {
		t.Fatalf("dgemmKit() built a kit with the blocking unchanged")
	}
	gemmDirectA = !gemmDirectA
	if k := sgemmKit(); k.direct != gemmDirectA {
		t.Fatalf("sgemmKit().direct = %v after gemmDirectA was set to %v", k.direct, gemmDirectA)
	}
	if k := dgemmKit(); k.direct != gemmDirectA {
		t.Fatalf("dgemmKit().direct = %v after gemmDirectA was set to %v", k.direct, gemmDirectA)
	}
	gemmDirectA = !gemmDirectA
	defer func(direct bool) { gemmDirectB = direct }(gemmDirectB)
	gemmDirectB = !gemmDirectB
	if k, kd := sgemmKit(), dgemmKit(); k.directB != gemmDirectB || kd.directB != gemmDirectB {
		t.Fatalf("kits' directB = %v, %v after gemmDirectB was set to %v", k.directB, kd.directB, gemmDirectB)
	}
	gemmDirectB = !gemmDirectB
	defer func(kc int) { dgemmKC = kc }(dgemmKC)
	dgemmKC /= 2
	if k := dgemmKit(); k.kc != dgemmKC {
		t.Fatalf("dgemmKit().kc = %d after dgemmKC was set to %d", k.kc, dgemmKC)
	}
}

// TestGemmAllocs checks that a product allocates a few objects whatever
// its number of blocks (the job and its counters), not one per kernel
// block: a temporary whose address reaches a kernel through a function
// value moves to the heap on every call.
func TestGemmAllocs(t *testing.T) {
	skipNoSgemm(t)
	r := newRand(15)
	for _, s := range [][3]int{{256, 512, 784}, {256, 784, 512}, {130, 100, 70}} {
		m, n, k := s[0], s[1], s[2]
		a, b, c := gemmMat(r, m, k, gRow, false), gemmMat(r, k, n, gCol, false), gemmMat(r, m, n, gRow, false)
		for _, parts := range []int{1, 2} {
			if allocs := testing.AllocsPerRun(10, func() { sgemm(m, n, k, a, b, c, parts) }); allocs > 6 {
				t.Errorf("%d×%d×%d on %d goroutines: %.0f allocations a product", m, n, k, parts, allocs)
			}
		}
	}
}
