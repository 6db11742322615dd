//go:build amd64

package cpu

//go:generate python3 ../tools/asmgen/gemm_avx512.py gemm_avx512_amd64.s

import (
	"unsafe"

	xcpu "golang.org/x/sys/cpu"
)

// sgemmAVX512 reports whether sgemm's blocks go through the AVX-512
// kernels (sgemmMacroZ): a 512-bit FMA does twice the work of a 256-bit
// one on cores with full-width units (Zen 5, Intel server cores), and as
// much on double-pumped ones (Zen 4), where the 32 registers still let the
// block grow from 6×16 to 6×64. A variable for the tests.
var sgemmAVX512 = cpuAVX512

// cpuAVX512 reports whether the CPU has the AVX-512 subsets the kernels use.
var cpuAVX512 = xcpu.X86.HasAVX512F && xcpu.X86.HasAVX512VL && xcpu.X86.HasAVX512BW

// gemmKCZ and gemmMCZ are the K step and the rows of A packed at once
// for the AVX-512 kernels; variables for the benchmarks.
var gemmKCZ, gemmMCZ = 512, 192

// sgemmBlocks returns the K step and the most rows of A packed at once
// for the kernels in use.
func sgemmBlocks() (kc, mc int) {
	if sgemmAVX512 {
		return gemmKCZ, gemmMCZ
	}
	return gemmKC, gemmMC
}

// gemmDirectA reports whether the AVX-512 kernels read a row-major A in
// place rather than packed (see gemmKit); a variable for the tests.
var gemmDirectA = true

// gemmDirectB reports whether the AVX-512 kernels read a row-major B in
// place rather than packed (see gemmKit.inPlaceB); a variable for the
// tests.
var gemmDirectB = true

// gemmNRZ is the columns of the AVX-512 kernels' widest block: four
// packed B panels of gemmNR columns side by side.
const gemmNRZ = 4 * gemmNR

// dgemmNR is the columns of a packed float64 B panel (one 512-bit
// register).
const dgemmNR = 8

// dgemmKC and dgemmMC are the K step and the rows of A packed at once for
// the float64 kernels; variables for the benchmarks.
var dgemmKC, dgemmMC = 256, 192

// A zKernel is an AVX-512 micro-kernel: the 6×(L·w) block a·b, L values
// a 512-bit register, from six rows of A (element (i, p) at a + i·ars +
// p·acs: a packed panel, or rows in place) and w panels of L columns of B
// bs values apart (row p of each at b + p·bstep: packed panels), stored
// to (or, when accum is not 0, added to) the first mr rows of c, whose
// rows are ldc values apart; of the last B panel's L columns only those
// set in mask are written. With bias (not nil; the float32 kernels only,
// the float64 ones ignore it), each row stored has the bias's w·L values
// added, then, when relu is not 0, its ReLU taken (an epilogue, see
// Epilogue).
type zKernel[T Float] func(k int, a *T, ars, acs int, b *T, bs, bstep int, c *T, ldc, accum, mr int, mask uint16, bias *T, relu int)

//go:noescape
func sgemmKernelZ6x64(k int, a *float32, ars, acs int, b *float32, bs, bstep int, c *float32, ldc, accum, mr int, mask uint16, bias *float32, relu int)

//go:noescape
func sgemmKernelZ6x48(k int, a *float32, ars, acs int, b *float32, bs, bstep int, c *float32, ldc, accum, mr int, mask uint16, bias *float32, relu int)

//go:noescape
func sgemmKernelZ6x32(k int, a *float32, ars, acs int, b *float32, bs, bstep int, c *float32, ldc, accum, mr int, mask uint16, bias *float32, relu int)

//go:noescape
func sgemmKernelZ6x16(k int, a *float32, ars, acs int, b *float32, bs, bstep int, c *float32, ldc, accum, mr int, mask uint16, bias *float32, relu int)

//go:noescape
func dgemmKernelZ6x32(k int, a *float64, ars, acs int, b *float64, bs, bstep int, c *float64, ldc, accum, mr int, mask uint16, bias *float64, relu int)

//go:noescape
func dgemmKernelZ6x24(k int, a *float64, ars, acs int, b *float64, bs, bstep int, c *float64, ldc, accum, mr int, mask uint16, bias *float64, relu int)

//go:noescape
func dgemmKernelZ6x16(k int, a *float64, ars, acs int, b *float64, bs, bstep int, c *float64, ldc, accum, mr int, mask uint16, bias *float64, relu int)

//go:noescape
func dgemmKernelZ6x8(k int, a *float64, ars, acs int, b *float64, bs, bstep int, c *float64, ldc, accum, mr int, mask uint16, bias *float64, relu int)

// The kernels by the number of B panels less one.
var (
	sgemmKernelsZ = [4]zKernel[float32]{sgemmKernelZ6x16, sgemmKernelZ6x32, sgemmKernelZ6x48, sgemmKernelZ6x64}
	dgemmKernelsZ = [4]zKernel[float64]{dgemmKernelZ6x8, dgemmKernelZ6x16, dgemmKernelZ6x24, dgemmKernelZ6x32}
)

// sgemmMacroZ is sgemmMacro with the AVX-512 kernels.
func sgemmMacroZ(mc, nc, kc int, a aPanels[float32], b bPanels[float32], c f32Mat, accum bool, epi Epilogue) {
	macroZ(&sgemmKernelsZ, gemmNR, mc, nc, kc, a, b, c, accum, epi)
}

// dgemmMacroZ is the float64 macro-kernel.
func dgemmMacroZ(mc, nc, kc int, a aPanels[float64], b bPanels[float64], c mat[float64], accum bool, epi Epilogue) {
	macroZ(&dgemmKernelsZ, dgemmNR, mc, nc, kc, a, b, c, accum, epi)
}

// macroZ computes the mc×nc block c from A's panels (packed, or rows in
// place) and B's panels of lanes columns (packed, or rows in place),
// storing it, or adding it
// to c when accum is set, in blocks of 6×(4·lanes): the edges with
// narrower kernels and masked stores, straight into c when its rows are
// contiguous, else through a temporary. The kernels read six rows of A
// whatever the block's height, so a last block of fewer rows in place is
// packed first. c is in range (gemm checked it), and so is B in place,
// whole panels included (gemmKit.inPlaceB). With an epilogue (a bias,
// and perhaps a ReLU after it: a float32 product's last K step, c's rows
// contiguous), the kernels apply it to each block as they store it.
func macroZ[T Float](kerns *[4]zKernel[T], lanes, mc, nc, kc int, a aPanels[T], b bPanels[T], c mat[T], accum bool, epi Epilogue) {
	// The kernel reads whole panels through pointers.
	a.check(mc, kc)
	if b.packed {
		_ = b.data[b.off+(nc+lanes-1)/lanes*b.step-1]
	}
	acc := 0
	if accum {
		acc = 1
	}
	wide := 4 * lanes
	var bias []T // the epilogue's bias, which the float32 kernels add as they store
	relu := 0    // the epilogue's ReLU, after the bias
	if epi.ReLU {
		relu = 1
	}
	if epi.Bias != nil {
		if unsafe.Sizeof(T(0)) != 4 {
			panic("cpu: macroZ: an epilogue on a float64 product")
		}
		bias = unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(epi.Bias))), len(epi.Bias))
	}
	var tile []T // for a C whose columns are not contiguous; made when needed (the kernels' pointer would move an array to the heap on every call)
	var edge []T // the last, short panel of rows in place, packed
	for jr := 0; jr < nc; jr += wide {
		nr := min(wide, nc-jr)
		w := (nr + lanes - 1) / lanes
		last := nr - (w-1)*lanes
		mask := uint16(1)<<last - 1
		kern := kerns[w-1]
		bpan := &b.data[b.off+jr/lanes*b.step]
		for ir := 0; ir < mc; ir += gemmMR {
			mr := min(gemmMR, mc-ir)
			apan, ars, acs := &a.data[a.off+ir/gemmMR*a.step], a.rs, a.cs
			if mr < gemmMR && a.inPlace() {
				if edge == nil {
					edge = a.edge
					if len(edge) < gemmMR*kc {
						edge = make([]T, gemmMR*kc)
					}
					packAFrom(edge, mat[T]{data: a.data, off: a.off + ir/gemmMR*a.step, rs: a.rs, cs: a.cs}, 0, mr, kc)
				}
				apan, ars, acs = &edge[0], 1, gemmMR
			}
			if c.cs == 1 {
				kern(kc, apan, ars, acs, bpan, b.step, b.rs, &c.data[c.off+ir*c.rs+jr], c.rs, acc, mr, mask, bpan0(bias, jr), relu)
				continue
			}
			if tile == nil {
				tile = make([]T, gemmMR*gemmNRZ)
			}
			if bias != nil {
				panic("cpu: macroZ: an epilogue on a C whose columns are not contiguous")
			}
			kern(kc, apan, ars, acs, bpan, b.step, b.rs, &tile[0], wide, 0, gemmMR, 0xFFFF, nil, 0)
			storeTile(c.at(ir, jr), tile, wide, mr, nr, accum)
		}
	}
}

// bpan0 returns the bias values of the columns from jr on, or nil
// without a bias.
func bpan0[T Float](bias []T, jr int) *T {
	if bias == nil {
		return nil
	}
	return &bias[jr]
}
