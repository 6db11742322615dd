//go:build amd64

#include "textflag.h"

// Matrix-vector kernels for AVX-512 (F): a dot product and an axpy of
// four columns over n float32 values, 64 at a time in four registers (the
// dot product), then 16 at a time, the last 1–15 under a mask (K1) so
// that nothing past n is read or written. The axpy of one column, whose
// loop is vec_amd64.s's, is generated there (axpyZ).

// func dotZ(x, y *float32, n int) float32
//
// Returns Σ x_i·y_i, with four partial sums of 16 lanes each added at the
// end.
TEXT ·dotZ(SB), NOSPLIT, $0-28
	MOVQ   x+0(FP), SI
	MOVQ   y+8(FP), DI
	MOVQ   n+16(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	CMPQ   CX, $64
	JB     one

four:
	VMOVUPS     (SI), Z4
	VMOVUPS     64(SI), Z5
	VMOVUPS     128(SI), Z6
	VMOVUPS     192(SI), Z7
	VFMADD231PS (DI), Z4, Z0
	VFMADD231PS 64(DI), Z5, Z1
	VFMADD231PS 128(DI), Z6, Z2
	VFMADD231PS 192(DI), Z7, Z3
	ADDQ        $256, SI
	ADDQ        $256, DI
	SUBQ        $64, CX
	CMPQ        CX, $64
	JAE         four

one:
	CMPQ        CX, $16
	JB          tail
	VMOVUPS     (SI), Z4
	VFMADD231PS (DI), Z4, Z0
	ADDQ        $64, SI
	ADDQ        $64, DI
	SUBQ        $16, CX
	JMP         one

tail:
	TESTQ       CX, CX
	JZ          sum
	MOVL        $1, AX
	SHLL        CX, AX
	DECL        AX
	KMOVW       AX, K1
	VMOVUPS.Z   (SI), K1, Z4
	VMOVUPS.Z   (DI), K1, Z5
	VFMADD231PS Z5, Z4, Z1

sum:
	VADDPS        Z1, Z0, Z0
	VADDPS        Z3, Z2, Z2
	VADDPS        Z2, Z0, Z0
	VEXTRACTF32X8 $1, Z0, Y1
	VADDPS        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VADDPS        X1, X0, X0
	VMOVHLPS      X0, X0, X1
	VADDPS        X1, X0, X0
	VMOVSHDUP     X0, X1
	VADDSS        X1, X0, X0
	VMOVSS        X0, ret+24(FP)
	VZEROUPPER
	RET

// func axpy4Z(dst, x *float32, ld, n int, a0, a1, a2, a3 float32)
//
// Sets dst_i += a0·x_i, then a1·x_{ld+i}, a2·x_{2ld+i} and a3·x_{3ld+i}
// (four columns ld apart), one fused multiply-add each in that order,
// as four axpyZ calls would, but loading and storing dst once.
TEXT ·axpy4Z(SB), NOSPLIT, $0-48
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         ld+16(FP), R8
	MOVQ         n+24(FP), CX
	VBROADCASTSS a0+32(FP), Z8
	VBROADCASTSS a1+36(FP), Z9
	VBROADCASTSS a2+40(FP), Z10
	VBROADCASTSS a3+44(FP), Z11
	SHLQ         $2, R8
	LEAQ         (SI)(R8*1), R9
	LEAQ         (R9)(R8*1), R10
	LEAQ         (R10)(R8*1), R11

loop4:
	CMPQ        CX, $16
	JB          tail4
	VMOVUPS     (DI), Z0
	VFMADD231PS (SI), Z8, Z0
	VFMADD231PS (R9), Z9, Z0
	VFMADD231PS (R10), Z10, Z0
	VFMADD231PS (R11), Z11, Z0
	VMOVUPS     Z0, (DI)
	ADDQ        $64, DI
	ADDQ        $64, SI
	ADDQ        $64, R9
	ADDQ        $64, R10
	ADDQ        $64, R11
	SUBQ        $16, CX
	JMP         loop4

tail4:
	TESTQ       CX, CX
	JZ          done4
	MOVL        $1, AX
	SHLL        CX, AX
	DECL        AX
	KMOVW       AX, K1
	VMOVUPS.Z   (DI), K1, Z0
	VMOVUPS.Z   (SI), K1, Z1
	VFMADD231PS Z1, Z8, Z0
	VMOVUPS.Z   (R9), K1, Z1
	VFMADD231PS Z1, Z9, Z0
	VMOVUPS.Z   (R10), K1, Z1
	VFMADD231PS Z1, Z10, Z0
	VMOVUPS.Z   (R11), K1, Z1
	VFMADD231PS Z1, Z11, Z0
	VMOVUPS     Z0, K1, (DI)

done4:
	VZEROUPPER
	RET
