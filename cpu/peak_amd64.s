//go:build amd64

#include "textflag.h"

// FMA throughput probes: n iterations of independent fused multiply-adds
// acc += x·x on 256-bit (fmaLoopY: 15 chains, Y1–Y15) or 512-bit
// (fmaLoopZ: 24 chains, Z8–Z31) registers, x = 2⁻¹⁰ in every lane.
//
// A core keeps latency × pipes FMAs in flight: 4 × 2 = 8 on Skylake-X,
// Ice Lake, Sapphire Rapids and Zen 5, 5 × 2 = 10 on Haswell, 4 × 1 at
// 512 bits on Zen 4. 15 and 24 chains cover that with room to spare. The
// accumulators start at 0 and stop growing at 16 (x·x = 2⁻²⁰ is then
// below half an ulp): every operand and result stays a normal float, as
// in a GEMM, never a denormal, NaN or whatever an earlier function left
// in the register. The loop counter runs on the integer ports beside the
// FMAs, so one DECQ/JNZ per 15 or 24 of them costs nothing.

// fmaOperand is x = 2⁻¹⁰ as a float32.
DATA fmaOperand<>+0(SB)/4, $0x3a800000
GLOBL fmaOperand<>(SB), RODATA|NOPTR, $4

#define FMASY \
	VFMADD231PS Y0, Y0, Y1 \
	VFMADD231PS Y0, Y0, Y2 \
	VFMADD231PS Y0, Y0, Y3 \
	VFMADD231PS Y0, Y0, Y4 \
	VFMADD231PS Y0, Y0, Y5 \
	VFMADD231PS Y0, Y0, Y6 \
	VFMADD231PS Y0, Y0, Y7 \
	VFMADD231PS Y0, Y0, Y8 \
	VFMADD231PS Y0, Y0, Y9 \
	VFMADD231PS Y0, Y0, Y10 \
	VFMADD231PS Y0, Y0, Y11 \
	VFMADD231PS Y0, Y0, Y12 \
	VFMADD231PS Y0, Y0, Y13 \
	VFMADD231PS Y0, Y0, Y14 \
	VFMADD231PS Y0, Y0, Y15

#define FMASZ \
	VFMADD231PS Z0, Z0, Z8 \
	VFMADD231PS Z0, Z0, Z9 \
	VFMADD231PS Z0, Z0, Z10 \
	VFMADD231PS Z0, Z0, Z11 \
	VFMADD231PS Z0, Z0, Z12 \
	VFMADD231PS Z0, Z0, Z13 \
	VFMADD231PS Z0, Z0, Z14 \
	VFMADD231PS Z0, Z0, Z15 \
	VFMADD231PS Z0, Z0, Z16 \
	VFMADD231PS Z0, Z0, Z17 \
	VFMADD231PS Z0, Z0, Z18 \
	VFMADD231PS Z0, Z0, Z19 \
	VFMADD231PS Z0, Z0, Z20 \
	VFMADD231PS Z0, Z0, Z21 \
	VFMADD231PS Z0, Z0, Z22 \
	VFMADD231PS Z0, Z0, Z23 \
	VFMADD231PS Z0, Z0, Z24 \
	VFMADD231PS Z0, Z0, Z25 \
	VFMADD231PS Z0, Z0, Z26 \
	VFMADD231PS Z0, Z0, Z27 \
	VFMADD231PS Z0, Z0, Z28 \
	VFMADD231PS Z0, Z0, Z29 \
	VFMADD231PS Z0, Z0, Z30 \
	VFMADD231PS Z0, Z0, Z31

// func fmaLoopY(n int)
TEXT ·fmaLoopY(SB), NOSPLIT, $0-8
	MOVQ         n+0(FP), CX
	VBROADCASTSS fmaOperand<>(SB), Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15
	PCALIGN      $64

loopY:
	FMASY
	DECQ CX
	JNZ  loopY
	VZEROUPPER
	RET

// func fmaLoopZ(n int)
TEXT ·fmaLoopZ(SB), NOSPLIT, $0-8
	MOVQ         n+0(FP), CX
	VBROADCASTSS fmaOperand<>(SB), Z0
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	VPXORD Z24, Z24, Z24
	VPXORD Z25, Z25, Z25
	VPXORD Z26, Z26, Z26
	VPXORD Z27, Z27, Z27
	VPXORD Z28, Z28, Z28
	VPXORD Z29, Z29, Z29
	VPXORD Z30, Z30, Z30
	VPXORD Z31, Z31, Z31
	PCALIGN      $64

loopZ:
	FMASZ
	DECQ CX
	JNZ  loopZ
	VZEROUPPER
	RET
