//go:build amd64

#include "textflag.h"

// The column fold of float32 sums, for AVX2 (reduce_amd64.go's Go
// wrapper does the rest of a row). The row sums, max and min kernels are
// generated into exp_amd64.s by tools/asmgen/exp_avx.py.

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
