//go:build amd64

package cpu

import xcpu "golang.org/x/sys/cpu"

// sgemmAVX512 reports whether sgemm's blocks go through the AVX-512
// kernels (sgemmMacroZ): a 512-bit FMA does twice the work of a 256-bit
// one on cores with full-width units (Zen 5, Intel server cores), and as
// much on double-pumped ones (Zen 4), where the 32 registers still let the
// block grow from 6×16 to 6×64. A variable for the tests.
var sgemmAVX512 = cpuAVX512

// cpuAVX512 reports whether the CPU has the AVX-512 subsets the kernels use.
var cpuAVX512 = xcpu.X86.HasAVX512F && xcpu.X86.HasAVX512VL && xcpu.X86.HasAVX512BW

// gemmNRZ is the columns of the AVX-512 kernels' widest block: four
// packed B panels of gemmNR columns side by side.
const gemmNRZ = 4 * gemmNR

// The AVX-512 float32 micro-kernels: the 6×(16·w) block a·b, w = 4, 3, 2,
// 1, from a packed A panel and w packed B panels bs floats apart, stored
// to (or, when accum is not 0, added to) the first mr rows of c, whose
// rows are ldc floats apart; of the last B panel's sixteen columns, only
// those set in mask are written.
//
//go:noescape
func sgemmKernelZ6x64(k int, a, b *float32, bs int, c *float32, ldc, accum, mr int, mask uint16)

//go:noescape
func sgemmKernelZ6x48(k int, a, b *float32, bs int, c *float32, ldc, accum, mr int, mask uint16)

//go:noescape
func sgemmKernelZ6x32(k int, a, b *float32, bs int, c *float32, ldc, accum, mr int, mask uint16)

//go:noescape
func sgemmKernelZ6x16(k int, a, b *float32, bs int, c *float32, ldc, accum, mr int, mask uint16)

// sgemmKernelsZ are the AVX-512 kernels by the number of B panels less one.
var sgemmKernelsZ = [4]func(k int, a, b *float32, bs int, c *float32, ldc, accum, mr int, mask uint16){
	sgemmKernelZ6x16, sgemmKernelZ6x32, sgemmKernelZ6x48, sgemmKernelZ6x64,
}

// sgemmMacroZ is sgemmMacro with the AVX-512 kernels: the block is
// walked in 6×64 blocks, the edges with narrower kernels and masked
// stores, straight into c when its rows are contiguous, else through a
// temporary.
func sgemmMacroZ(mc, nc, kc int, ap, bp []float32, c f32Mat, accum bool) {
	// The kernel reads whole panels through pointers.
	_ = ap[(mc+gemmMR-1)/gemmMR*gemmMR*kc-1]
	_ = bp[(nc+gemmNR-1)/gemmNR*gemmNR*kc-1]
	acc := 0
	if accum {
		acc = 1
	}
	bs := gemmNR * kc
	var tile [gemmMR * gemmNRZ]float32
	for jr := 0; jr < nc; jr += gemmNRZ {
		nr := min(gemmNRZ, nc-jr)
		w := (nr + gemmNR - 1) / gemmNR
		mask := uint16(1)<<(nr-(w-1)*gemmNR) - 1
		if nr-(w-1)*gemmNR == gemmNR {
			mask = 0xFFFF
		}
		kern := sgemmKernelsZ[w-1]
		bpan := &bp[jr*kc]
		for ir := 0; ir < mc; ir += gemmMR {
			mr := min(gemmMR, mc-ir)
			apan := &ap[ir*kc]
			if c.cs == 1 {
				kern(kc, apan, bpan, bs, &c.data[c.off+ir*c.rs+jr], c.rs, acc, mr, mask)
				continue
			}
			kern(kc, apan, bpan, bs, &tile[0], gemmNRZ, 0, gemmMR, 0xFFFF)
			for i := range mr {
				o := c.off + (ir+i)*c.rs + jr*c.cs
				t := tile[i*gemmNRZ : i*gemmNRZ+nr]
				if accum {
					for j, v := range t {
						c.data[o+j*c.cs] += v
					}
				} else {
					for j, v := range t {
						c.data[o+j*c.cs] = v
					}
				}
			}
		}
	}
}
