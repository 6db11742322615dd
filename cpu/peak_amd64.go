//go:build amd64

package cpu

import xcpu "golang.org/x/sys/cpu"

// fmaLoopY runs n iterations of fmaChainsY independent 256-bit float32
// FMAs.
//
//go:noescape
func fmaLoopY(n int)

// fmaLoopZ runs n iterations of fmaChainsZ independent 512-bit float32
// FMAs.
//
//go:noescape
func fmaLoopZ(n int)

// FMABits is the width of the widest fused multiply-add this CPU has and
// the float32 GEMM uses: 512 (AVX-512), 256 (AVX2 and FMA), or 0 (none:
// FMAPeak runs plain Go).
func FMABits() int {
	switch {
	case cpuAVX512:
		return 512
	case xcpu.X86.HasAVX2 && xcpu.X86.HasFMA:
		return 256
	}
	return 0
}

// fmaLoop runs n ≥ 1 iterations of the FMA loop of FMABits' width and
// returns the float32 flops done (the assembly loops test n after an
// iteration: n = 0 would run 2⁶⁴ of them).
func fmaLoop(n int) float64 {
	switch FMABits() {
	case 512:
		fmaLoopZ(n)
		return float64(n) * fmaFlopsZ
	case 256:
		fmaLoopY(n)
		return float64(n) * fmaFlopsY
	}
	return goFMALoop(n)
}
