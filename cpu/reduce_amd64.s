//go:build amd64

#include "textflag.h"

// Float32 reduction kernels for AVX2. Each takes a count n that is a
// positive multiple of 8; the Go wrappers in reduce_amd64.go do the rest
// of a row.

// func sumAVX2(x *float32, n int) float64
//
// Converts 4-lane halves to float64 (VCVTPS2PD) and adds them into eight
// independent float64 accumulators, 32 elements per iteration (a run of
// 8 goes to the first two), then combines the accumulators in a fixed
// tree: ((Y0+Y1)+(Y2+Y3)) + ((Y4+Y5)+(Y6+Y7)), lanes (0+2)+(1+3).
TEXT ·sumAVX2(SB), NOSPLIT, $0-24
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), CX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	CMPQ   CX, $32
	JB     tail

loop32:
	VCVTPS2PD 0(SI), Y8
	VCVTPS2PD 16(SI), Y9
	VCVTPS2PD 32(SI), Y10
	VCVTPS2PD 48(SI), Y11
	VCVTPS2PD 64(SI), Y12
	VCVTPS2PD 80(SI), Y13
	VCVTPS2PD 96(SI), Y14
	VCVTPS2PD 112(SI), Y15
	VADDPD    Y8, Y0, Y0
	VADDPD    Y9, Y1, Y1
	VADDPD    Y10, Y2, Y2
	VADDPD    Y11, Y3, Y3
	VADDPD    Y12, Y4, Y4
	VADDPD    Y13, Y5, Y5
	VADDPD    Y14, Y6, Y6
	VADDPD    Y15, Y7, Y7
	ADDQ      $128, SI
	SUBQ      $32, CX
	CMPQ      CX, $32
	JAE       loop32

tail:
	TESTQ CX, CX
	JZ    combine

loop8:
	VCVTPS2PD 0(SI), Y8
	VCVTPS2PD 16(SI), Y9
	VADDPD    Y8, Y0, Y0
	VADDPD    Y9, Y1, Y1
	ADDQ      $32, SI
	SUBQ      $8, CX
	JNZ       loop8

combine:
	VADDPD       Y1, Y0, Y0
	VADDPD       Y3, Y2, Y2
	VADDPD       Y5, Y4, Y4
	VADDPD       Y7, Y6, Y6
	VADDPD       Y2, Y0, Y0
	VADDPD       Y6, Y4, Y4
	VADDPD       Y4, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VUNPCKHPD    X0, X0, X1
	VADDSD       X1, X0, X0
	VMOVSD       X0, ret+16(FP)
	VZEROUPPER
	RET

// func foldCols4AVX2(acc *float64, x *float32, rs, n int)
//
// Adds to acc[j], for j < n (a positive multiple of 4), the float64 sum
// (x0[j]+x1[j]) + (x2[j]+x3[j]) of four rows of float32 values rs
// elements apart, four columns a step: the order of the Go loop in
// fold.go's Cols4, so the results are the same bits.
TEXT ·foldCols4AVX2(SB), NOSPLIT, $0-32
	MOVQ acc+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ rs+16(FP), R8
	MOVQ n+24(FP), CX
	SHLQ $2, R8
	LEAQ (SI)(R8*2), R10 // row 2

cols4:
	VCVTPS2PD 0(SI), Y0
	VCVTPS2PD 0(SI)(R8*1), Y1
	VCVTPS2PD 0(R10), Y2
	VCVTPS2PD 0(R10)(R8*1), Y3
	VADDPD    Y1, Y0, Y0
	VADDPD    Y3, Y2, Y2
	VADDPD    Y2, Y0, Y0
	VADDPD    0(DI), Y0, Y0
	VMOVUPD   Y0, 0(DI)
	ADDQ      $16, SI
	ADDQ      $16, R10
	ADDQ      $32, DI
	SUBQ      $4, CX
	JNZ       cols4
	VZEROUPPER
	RET

// func sumAVX512(x *float32, n int) float64
//
// sumAVX2 with 512-bit registers: converts 8-lane quarters to float64
// (VCVTPS2PD from 32 bytes) into eight independent accumulators, 64
// elements per iteration (n is a positive multiple of 64), then combines
// them in a fixed tree: ((Z0+Z1)+(Z2+Z3)) + ((Z4+Z5)+(Z6+Z7)), then the
// halves, quarters and lanes of the result.
TEXT ·sumAVX512(SB), NOSPLIT, $0-24
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), CX
	VXORPD Z0, Z0, Z0
	VXORPD Z1, Z1, Z1
	VXORPD Z2, Z2, Z2
	VXORPD Z3, Z3, Z3
	VXORPD Z4, Z4, Z4
	VXORPD Z5, Z5, Z5
	VXORPD Z6, Z6, Z6
	VXORPD Z7, Z7, Z7

loop64:
	VCVTPS2PD 0(SI), Z8
	VCVTPS2PD 32(SI), Z9
	VCVTPS2PD 64(SI), Z10
	VCVTPS2PD 96(SI), Z11
	VCVTPS2PD 128(SI), Z12
	VCVTPS2PD 160(SI), Z13
	VCVTPS2PD 192(SI), Z14
	VCVTPS2PD 224(SI), Z15
	VADDPD    Z8, Z0, Z0
	VADDPD    Z9, Z1, Z1
	VADDPD    Z10, Z2, Z2
	VADDPD    Z11, Z3, Z3
	VADDPD    Z12, Z4, Z4
	VADDPD    Z13, Z5, Z5
	VADDPD    Z14, Z6, Z6
	VADDPD    Z15, Z7, Z7
	ADDQ      $256, SI
	SUBQ      $64, CX
	JNZ       loop64

	VADDPD        Z1, Z0, Z0
	VADDPD        Z3, Z2, Z2
	VADDPD        Z5, Z4, Z4
	VADDPD        Z7, Z6, Z6
	VADDPD        Z2, Z0, Z0
	VADDPD        Z6, Z4, Z4
	VADDPD        Z4, Z0, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPD        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VADDPD        X1, X0, X0
	VUNPCKHPD     X0, X0, X1
	VADDSD        X1, X0, X0
	VZEROUPPER
	MOVSD         X0, ret+16(FP)
	RET
