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

// FOLD8 adds to the eight float64 accumulators at aoff(BX) the sums
// (x0+x1) + (x2+x3) of the eight float32 columns at xoff(R10) of four
// rows R8 bytes apart (R11: three rows), in registers r0-r3.
#define FOLD8(xoff, aoff, r0, r1, r2, r3) \
	VCVTPS2PD xoff(R10), r0 \
	VCVTPS2PD xoff(R10)(R8*1), r1 \
	VCVTPS2PD xoff(R10)(R8*2), r2 \
	VCVTPS2PD xoff(R10)(R11*1), r3 \
	VADDPD    r1, r0, r0 \
	VADDPD    r3, r2, r2 \
	VADDPD    r2, r0, r0 \
	VADDPD    aoff(BX), r0, r0 \
	VMOVUPD   r0, aoff(BX)

// func foldColsAVX512(acc *float64, x *float32, rs, groups, n int)
//
// Adds to acc[j], for j < n (a positive multiple of 16), groups (> 0)
// groups of four rows of float32 values rs elements apart, one group
// after the other, each as foldCols4AVX2 adds it: acc += (x0+x1) +
// (x2+x3), the same bits. Each group streams its four rows sixteen
// columns a step, as a row sum does; walking the columns of all the
// groups first, accumulators in registers, ran slower (its loads a
// cache line apart, row after row).
TEXT ·foldColsAVX512(SB), NOSPLIT, $0-40
	MOVQ acc+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ rs+16(FP), R8
	MOVQ groups+24(FP), R9
	MOVQ n+32(FP), CX
	SHLQ $2, R8           // a row, in bytes
	LEAQ (R8)(R8*2), R11  // three rows
	MOVQ R8, R12
	SHLQ $2, R12          // a group of four rows

group:
	MOVQ DI, BX
	MOVQ SI, R10
	MOVQ CX, DX

cols16:
	FOLD8(0, 0, Z2, Z3, Z4, Z5)
	FOLD8(32, 64, Z6, Z7, Z8, Z9)
	ADDQ      $64, R10
	ADDQ      $128, BX
	SUBQ      $16, DX
	JNZ       cols16

	ADDQ R12, SI
	DECQ R9
	JNZ  group
	VZEROUPPER
	RET
