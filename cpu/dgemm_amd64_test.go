package cpu

import (
	"math"
	"reflect"
	"sync"
	"testing"
)

func skipNoDgemm(t *testing.T) {
	if !dgemmAsm {
		t.Skip("no AVX-512: float64 products go to gonum")
	}
}

// TestDgemmShapes checks the float64 GEMM against a float64 reference
// over odd shapes, the edges of its blocks, and every operand layout.
func TestDgemmShapes(t *testing.T) {
	skipNoDgemm(t)
	r := newRand(21)
	for i, s := range []int{1, 2, 5, 7, 8, 9, 17, 33, 65, 100, 129} {
		for j, ak := range gKinds {
			runGemmT(t, r, dgemm, s, s, s, ak, gKinds[(i+j)%4], gKinds[(i+2*j)%4])
		}
	}
	for _, s := range [][3]int{
		{257, 33, 300}, {5, 300, 129}, {300, 7, 1}, {1, 400, 65}, {97, 40, 257},
		{100, 100, 100}, {12, 1030, 3}, {6, 32, 600}, {200, 150, 70}, {1, 1, 1000},
	} {
		for j, ak := range gKinds {
			runGemmT(t, r, dgemm, s[0], s[1], s[2], ak, gKinds[(j+1)%4], gKinds[(j+3)%4])
		}
	}
	// The shared operand packed block by block.
	defer func(s int) { gemmShared = s }(gemmShared)
	gemmShared = 24000 // 3000 float64
	for _, s := range [][3]int{{150, 100, 40}, {100, 150, 40}, {61, 200, 7}} {
		for j, ak := range gKinds {
			runGemmT(t, r, dgemm, s[0], s[1], s[2], ak, gKinds[(j+2)%4], gKinds[(j+1)%4])
		}
	}
}

// TestDgemmNaNInf checks that a NaN or an Inf in an operand reaches the
// elements of C it contributes to, 0·Inf included.
func TestDgemmNaNInf(t *testing.T) {
	skipNoDgemm(t)
	r := newRand(22)
	m, n, k := 13, 40, 70
	a, b := gemmMatT[float64](r, m, k, gRow, false), gemmMatT[float64](r, k, n, gCol, false)
	a.data[a.off+2*a.rs+5*a.cs] = math.NaN() // row 2 of c is NaN
	b.data[b.off+9*b.rs+39*b.cs] = math.Inf(1)
	a.data[a.off+7*a.rs+9*a.cs] = 0 // c[7, 39] has 0·Inf
	c := gemmMatT[float64](r, m, n, gRow, true)
	dgemm(m, n, k, a, b, c, 2)
	for i := range m {
		for j := range n {
			v := c.get(i, j)
			switch {
			case i == 2 || (i == 7 && j == 39):
				if !math.IsNaN(v) {
					t.Fatalf("c[%d,%d] = %v, want NaN", i, j, v)
				}
			case j == 39:
				if !math.IsInf(v, 0) {
					t.Fatalf("c[%d,%d] = %v, want ±Inf", i, j, v)
				}
			case math.IsNaN(v) || math.IsInf(v, 0):
				t.Fatalf("c[%d,%d] = %v, want finite", i, j, v)
			}
		}
	}
}

// TestDgemmMatchesGonum runs batched float64 MatMul through dgemm and
// through gonum, broadcast and strided operands included.
func TestDgemmMatchesGonum(t *testing.T) {
	skipNoDgemm(t)
	matchesGonum[float64](t, newRand(23), &dgemmAsm, 1e-13,
		[][4]int{{1, 64, 64, 64}, {3, 17, 33, 65}, {2, 130, 9, 257}, {40, 9, 10, 11}, {4, 100, 70, 300}})
}

// TestDgemmAllocs checks that a float64 product allocates as few objects
// as a float32 one (TestGemmAllocs): the kit is built once, not per call.
func TestDgemmAllocs(t *testing.T) {
	skipNoDgemm(t)
	r := newRand(22)
	m, n, k := 130, 100, 70
	a, b, c := gemmMatT[float64](r, m, k, gRow, false), gemmMatT[float64](r, k, n, gCol, false), gemmMatT[float64](r, m, n, gRow, false)
	for _, parts := range []int{1, 2} {
		if allocs := testing.AllocsPerRun(10, func() { dgemm(m, n, k, a, b, c, parts) }); allocs > 6 {
			t.Errorf("%d×%d×%d on %d goroutines: %.0f allocations a product", m, n, k, parts, allocs)
		}
	}
}

// TestGemmConcurrent runs float32 and float64 products from several
// goroutines at once, which share the kits, the packing buffers kept
// between products (gemmCache) and runUnits's helpers, and checks each
// against the same product computed alone: the blocks of C and their K
// steps do not depend on the goroutine that takes them, so the results
// are equal bit for bit. Run under -race it checks the shared state.
func TestGemmConcurrent(t *testing.T) {
	skipNoDgemm(t)
	r := newRand(23)
	shapes := [][3]int{{130, 100, 70}, {70, 200, 300}, {257, 1, 65}, {33, 65, 600}}
	type product struct {
		run  func(c any)
		want any
		c    func() any
	}
	var ps []product
	for _, s := range shapes {
		m, n, k := s[0], s[1], s[2]
		a32, b32 := gemmMat(r, m, k, gRow, false), gemmMat(r, k, n, gCol, false)
		a64, b64 := gemmMatT[float64](r, m, k, gPad, false), gemmMatT[float64](r, k, n, gRow, false)
		c32 := func() any { return gemmMat(r, m, n, gRow, true) }
		c64 := func() any { return gemmMatT[float64](r, m, n, gRow, true) }
		ps = append(ps,
			product{run: func(c any) { sgemm(m, n, k, a32, b32, c.(f32Mat), 2) }, c: c32},
			product{run: func(c any) { dgemm(m, n, k, a64, b64, c.(mat[float64]), 2) }, c: c64})
	}
	for i := range ps {
		ps[i].want = ps[i].c()
		ps[i].run(ps[i].want)
	}
	outs := make([][]any, 4)
	for g := range outs {
		for range 5 {
			for _, p := range ps {
				outs[g] = append(outs[g], p.c())
			}
		}
	}
	var wg sync.WaitGroup
	for g := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, c := range outs[g] {
				ps[i%len(ps)].run(c)
			}
		}()
	}
	wg.Wait()
	for g := range outs {
		for i, c := range outs[g] {
			if !reflect.DeepEqual(c, ps[i%len(ps)].want) {
				t.Errorf("goroutine %d, product %d (%v): differs from the product computed alone", g, i, shapes[i%len(ps)/2])
			}
		}
	}
}
