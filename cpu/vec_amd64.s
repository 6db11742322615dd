//go:build amd64

#include "textflag.h"

// Elementwise float32 kernels for AVX-512 (F) over n ≥ 0 values, made by
// one loop shape: 64 values at a time in four registers, then 16, the
// last 1–15 under a mask (K1) so that nothing past n is read or written.
// Each lane computes what the Go expression in the function's comment
// computes for float32 operands, with the same roundings (one per
// operation, no fused multiply-add), so results match the scalar loops
// bit for bit.

// func addZ(dst *float32, x *float32, y *float32, n int)
//
// Sets dst_i = x_i + y_i.
TEXT ·addZ(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DX
	MOVQ n+24(FP), CX
	CMPQ CX, $64
	JB   addZ_one
addZ_four:
	VMOVUPS 0(SI), Z0
	VMOVUPS 0(DX), Z4
	VADDPS Z4, Z0, Z0
	VMOVUPS Z0, 0(DI)
	VMOVUPS 64(SI), Z1
	VMOVUPS 64(DX), Z5
	VADDPS Z5, Z1, Z1
	VMOVUPS Z1, 64(DI)
	VMOVUPS 128(SI), Z2
	VMOVUPS 128(DX), Z6
	VADDPS Z6, Z2, Z2
	VMOVUPS Z2, 128(DI)
	VMOVUPS 192(SI), Z3
	VMOVUPS 192(DX), Z7
	VADDPS Z7, Z3, Z3
	VMOVUPS Z3, 192(DI)
	ADDQ $256, DI
	ADDQ $256, SI
	ADDQ $256, DX
	SUBQ $64, CX
	CMPQ CX, $64
	JAE  addZ_four
addZ_one:
	CMPQ CX, $16
	JB   addZ_tail
	VMOVUPS 0(SI), Z0
	VMOVUPS 0(DX), Z4
	VADDPS Z4, Z0, Z0
	VMOVUPS Z0, 0(DI)
	ADDQ $64, DI
	ADDQ $64, SI
	ADDQ $64, DX
	SUBQ $16, CX
	JMP  addZ_one
addZ_tail:
	TESTQ CX, CX
	JZ    addZ_done
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1
	VMOVUPS.Z 0(SI), K1, Z0
	VMOVUPS.Z 0(DX), K1, Z4
	VADDPS Z4, Z0, Z0
	VMOVUPS Z0, K1, 0(DI)
addZ_done:
	VZEROUPPER
	RET

// func subZ(dst *float32, x *float32, y *float32, n int)
//
// Sets dst_i = x_i - y_i.
TEXT ·subZ(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DX
	MOVQ n+24(FP), CX
	CMPQ CX, $64
	JB   subZ_one
subZ_four:
	VMOVUPS 0(SI), Z0
	VMOVUPS 0(DX), Z4
	VSUBPS Z4, Z0, Z0
	VMOVUPS Z0, 0(DI)
	VMOVUPS 64(SI), Z1
	VMOVUPS 64(DX), Z5
	VSUBPS Z5, Z1, Z1
	VMOVUPS Z1, 64(DI)
	VMOVUPS 128(SI), Z2
	VMOVUPS 128(DX), Z6
	VSUBPS Z6, Z2, Z2
	VMOVUPS Z2, 128(DI)
	VMOVUPS 192(SI), Z3
	VMOVUPS 192(DX), Z7
	VSUBPS Z7, Z3, Z3
	VMOVUPS Z3, 192(DI)
	ADDQ $256, DI
	ADDQ $256, SI
	ADDQ $256, DX
	SUBQ $64, CX
	CMPQ CX, $64
	JAE  subZ_four
subZ_one:
	CMPQ CX, $16
	JB   subZ_tail
	VMOVUPS 0(SI), Z0
	VMOVUPS 0(DX), Z4
	VSUBPS Z4, Z0, Z0
	VMOVUPS Z0, 0(DI)
	ADDQ $64, DI
	ADDQ $64, SI
	ADDQ $64, DX
	SUBQ $16, CX
	JMP  subZ_one
subZ_tail:
	TESTQ CX, CX
	JZ    subZ_done
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1
	VMOVUPS.Z 0(SI), K1, Z0
	VMOVUPS.Z 0(DX), K1, Z4
	VSUBPS Z4, Z0, Z0
	VMOVUPS Z0, K1, 0(DI)
subZ_done:
	VZEROUPPER
	RET

// func mulZ(dst *float32, x *float32, y *float32, n int)
//
// Sets dst_i = x_i * y_i.
TEXT ·mulZ(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DX
	MOVQ n+24(FP), CX
	CMPQ CX, $64
	JB   mulZ_one
mulZ_four:
	VMOVUPS 0(SI), Z0
	VMOVUPS 0(DX), Z4
	VMULPS Z4, Z0, Z0
	VMOVUPS Z0, 0(DI)
	VMOVUPS 64(SI), Z1
	VMOVUPS 64(DX), Z5
	VMULPS Z5, Z1, Z1
	VMOVUPS Z1, 64(DI)
	VMOVUPS 128(SI), Z2
	VMOVUPS 128(DX), Z6
	VMULPS Z6, Z2, Z2
	VMOVUPS Z2, 128(DI)
	VMOVUPS 192(SI), Z3
	VMOVUPS 192(DX), Z7
	VMULPS Z7, Z3, Z3
	VMOVUPS Z3, 192(DI)
	ADDQ $256, DI
	ADDQ $256, SI
	ADDQ $256, DX
	SUBQ $64, CX
	CMPQ CX, $64
	JAE  mulZ_four
mulZ_one:
	CMPQ CX, $16
	JB   mulZ_tail
	VMOVUPS 0(SI), Z0
	VMOVUPS 0(DX), Z4
	VMULPS Z4, Z0, Z0
	VMOVUPS Z0, 0(DI)
	ADDQ $64, DI
	ADDQ $64, SI
	ADDQ $64, DX
	SUBQ $16, CX
	JMP  mulZ_one
mulZ_tail:
	TESTQ CX, CX
	JZ    mulZ_done
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1
	VMOVUPS.Z 0(SI), K1, Z0
	VMOVUPS.Z 0(DX), K1, Z4
	VMULPS Z4, Z0, Z0
	VMOVUPS Z0, K1, 0(DI)
mulZ_done:
	VZEROUPPER
	RET

// func divZ(dst *float32, x *float32, y *float32, n int)
//
// Sets dst_i = x_i / y_i.
TEXT ·divZ(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DX
	MOVQ n+24(FP), CX
	CMPQ CX, $64
	JB   divZ_one
divZ_four:
	VMOVUPS 0(SI), Z0
	VMOVUPS 0(DX), Z4
	VDIVPS Z4, Z0, Z0
	VMOVUPS Z0, 0(DI)
	VMOVUPS 64(SI), Z1
	VMOVUPS 64(DX), Z5
	VDIVPS Z5, Z1, Z1
	VMOVUPS Z1, 64(DI)
	VMOVUPS 128(SI), Z2
	VMOVUPS 128(DX), Z6
	VDIVPS Z6, Z2, Z2
	VMOVUPS Z2, 128(DI)
	VMOVUPS 192(SI), Z3
	VMOVUPS 192(DX), Z7
	VDIVPS Z7, Z3, Z3
	VMOVUPS Z3, 192(DI)
	ADDQ $256, DI
	ADDQ $256, SI
	ADDQ $256, DX
	SUBQ $64, CX
	CMPQ CX, $64
	JAE  divZ_four
divZ_one:
	CMPQ CX, $16
	JB   divZ_tail
	VMOVUPS 0(SI), Z0
	VMOVUPS 0(DX), Z4
	VDIVPS Z4, Z0, Z0
	VMOVUPS Z0, 0(DI)
	ADDQ $64, DI
	ADDQ $64, SI
	ADDQ $64, DX
	SUBQ $16, CX
	JMP  divZ_one
divZ_tail:
	TESTQ CX, CX
	JZ    divZ_done
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1
	VMOVUPS.Z 0(SI), K1, Z0
	VMOVUPS.Z 0(DX), K1, Z4
	VDIVPS Z4, Z0, Z0
	VMOVUPS Z0, K1, 0(DI)
divZ_done:
	VZEROUPPER
	RET

// func addScalarZ(dst *float32, x *float32, n int, y float32)
//
// Sets dst_i = x_i + y.
TEXT ·addScalarZ(SB), NOSPLIT, $0-28
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS y+24(FP), Z8
	CMPQ CX, $64
	JB   addScalarZ_one
addScalarZ_four:
	VMOVUPS 0(SI), Z0
	VADDPS Z8, Z0, Z0
	VMOVUPS Z0, 0(DI)
	VMOVUPS 64(SI), Z1
	VADDPS Z8, Z1, Z1
	VMOVUPS Z1, 64(DI)
	VMOVUPS 128(SI), Z2
	VADDPS Z8, Z2, Z2
	VMOVUPS Z2, 128(DI)
	VMOVUPS 192(SI), Z3
	VADDPS Z8, Z3, Z3
	VMOVUPS Z3, 192(DI)
	ADDQ $256, DI
	ADDQ $256, SI
	SUBQ $64, CX
	CMPQ CX, $64
	JAE  addScalarZ_four
addScalarZ_one:
	CMPQ CX, $16
	JB   addScalarZ_tail
	VMOVUPS 0(SI), Z0
	VADDPS Z8, Z0, Z0
	VMOVUPS Z0, 0(DI)
	ADDQ $64, DI
	ADDQ $64, SI
	SUBQ $16, CX
	JMP  addScalarZ_one
addScalarZ_tail:
	TESTQ CX, CX
	JZ    addScalarZ_done
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1
	VMOVUPS.Z 0(SI), K1, Z0
	VADDPS Z8, Z0, Z0
	VMOVUPS Z0, K1, 0(DI)
addScalarZ_done:
	VZEROUPPER
	RET

// func mulScalarZ(dst *float32, x *float32, n int, y float32)
//
// Sets dst_i = x_i * y.
TEXT ·mulScalarZ(SB), NOSPLIT, $0-28
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS y+24(FP), Z8
	CMPQ CX, $64
	JB   mulScalarZ_one
mulScalarZ_four:
	VMOVUPS 0(SI), Z0
	VMULPS Z8, Z0, Z0
	VMOVUPS Z0, 0(DI)
	VMOVUPS 64(SI), Z1
	VMULPS Z8, Z1, Z1
	VMOVUPS Z1, 64(DI)
	VMOVUPS 128(SI), Z2
	VMULPS Z8, Z2, Z2
	VMOVUPS Z2, 128(DI)
	VMOVUPS 192(SI), Z3
	VMULPS Z8, Z3, Z3
	VMOVUPS Z3, 192(DI)
	ADDQ $256, DI
	ADDQ $256, SI
	SUBQ $64, CX
	CMPQ CX, $64
	JAE  mulScalarZ_four
mulScalarZ_one:
	CMPQ CX, $16
	JB   mulScalarZ_tail
	VMOVUPS 0(SI), Z0
	VMULPS Z8, Z0, Z0
	VMOVUPS Z0, 0(DI)
	ADDQ $64, DI
	ADDQ $64, SI
	SUBQ $16, CX
	JMP  mulScalarZ_one
mulScalarZ_tail:
	TESTQ CX, CX
	JZ    mulScalarZ_done
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1
	VMOVUPS.Z 0(SI), K1, Z0
	VMULPS Z8, Z0, Z0
	VMOVUPS Z0, K1, 0(DI)
mulScalarZ_done:
	VZEROUPPER
	RET

// func sqrtZ(dst *float32, x *float32, n int)
//
// Sets dst_i = √x_i, correctly rounded (as float32(math.Sqrt(float64(x_i)))).
TEXT ·sqrtZ(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	CMPQ CX, $64
	JB   sqrtZ_one
sqrtZ_four:
	VMOVUPS 0(SI), Z0
	VSQRTPS Z0, Z0
	VMOVUPS Z0, 0(DI)
	VMOVUPS 64(SI), Z1
	VSQRTPS Z1, Z1
	VMOVUPS Z1, 64(DI)
	VMOVUPS 128(SI), Z2
	VSQRTPS Z2, Z2
	VMOVUPS Z2, 128(DI)
	VMOVUPS 192(SI), Z3
	VSQRTPS Z3, Z3
	VMOVUPS Z3, 192(DI)
	ADDQ $256, DI
	ADDQ $256, SI
	SUBQ $64, CX
	CMPQ CX, $64
	JAE  sqrtZ_four
sqrtZ_one:
	CMPQ CX, $16
	JB   sqrtZ_tail
	VMOVUPS 0(SI), Z0
	VSQRTPS Z0, Z0
	VMOVUPS Z0, 0(DI)
	ADDQ $64, DI
	ADDQ $64, SI
	SUBQ $16, CX
	JMP  sqrtZ_one
sqrtZ_tail:
	TESTQ CX, CX
	JZ    sqrtZ_done
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1
	VMOVUPS.Z 0(SI), K1, Z0
	VSQRTPS Z0, Z0
	VMOVUPS Z0, K1, 0(DI)
sqrtZ_done:
	VZEROUPPER
	RET

// func clampZ(dst *float32, x *float32, n int, lo float32, hi float32)
//
// Sets dst_i = min(max(x_i, lo), hi) for lo and hi neither zero nor NaN.
TEXT ·clampZ(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS lo+24(FP), Z8
	VBROADCASTSS hi+28(FP), Z9
	CMPQ CX, $64
	JB   clampZ_one
clampZ_four:
	VMOVUPS 0(SI), Z0
	VMAXPS Z0, Z8, Z0
	VMINPS Z0, Z9, Z0
	VMOVUPS Z0, 0(DI)
	VMOVUPS 64(SI), Z1
	VMAXPS Z1, Z8, Z1
	VMINPS Z1, Z9, Z1
	VMOVUPS Z1, 64(DI)
	VMOVUPS 128(SI), Z2
	VMAXPS Z2, Z8, Z2
	VMINPS Z2, Z9, Z2
	VMOVUPS Z2, 128(DI)
	VMOVUPS 192(SI), Z3
	VMAXPS Z3, Z8, Z3
	VMINPS Z3, Z9, Z3
	VMOVUPS Z3, 192(DI)
	ADDQ $256, DI
	ADDQ $256, SI
	SUBQ $64, CX
	CMPQ CX, $64
	JAE  clampZ_four
clampZ_one:
	CMPQ CX, $16
	JB   clampZ_tail
	VMOVUPS 0(SI), Z0
	VMAXPS Z0, Z8, Z0
	VMINPS Z0, Z9, Z0
	VMOVUPS Z0, 0(DI)
	ADDQ $64, DI
	ADDQ $64, SI
	SUBQ $16, CX
	JMP  clampZ_one
clampZ_tail:
	TESTQ CX, CX
	JZ    clampZ_done
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1
	VMOVUPS.Z 0(SI), K1, Z0
	VMAXPS Z0, Z8, Z0
	VMINPS Z0, Z9, Z0
	VMOVUPS Z0, K1, 0(DI)
clampZ_done:
	VZEROUPPER
	RET

// func addcmulZ(dst *float32, a *float32, b *float32, c *float32, n int, v float32)
//
// Sets dst_i = a_i + v·b_i·c_i.
TEXT ·addcmulZ(SB), NOSPLIT, $0-44
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ c+24(FP), R9
	MOVQ n+32(FP), CX
	VBROADCASTSS v+40(FP), Z8
	CMPQ CX, $64
	JB   addcmulZ_one
addcmulZ_four:
	VMOVUPS 0(DX), Z0
	VMULPS Z8, Z0, Z0
	VMOVUPS 0(R9), Z4
	VMULPS Z4, Z0, Z0
	VMOVUPS 0(SI), Z4
	VADDPS Z0, Z4, Z0
	VMOVUPS Z0, 0(DI)
	VMOVUPS 64(DX), Z1
	VMULPS Z8, Z1, Z1
	VMOVUPS 64(R9), Z5
	VMULPS Z5, Z1, Z1
	VMOVUPS 64(SI), Z5
	VADDPS Z1, Z5, Z1
	VMOVUPS Z1, 64(DI)
	VMOVUPS 128(DX), Z2
	VMULPS Z8, Z2, Z2
	VMOVUPS 128(R9), Z6
	VMULPS Z6, Z2, Z2
	VMOVUPS 128(SI), Z6
	VADDPS Z2, Z6, Z2
	VMOVUPS Z2, 128(DI)
	VMOVUPS 192(DX), Z3
	VMULPS Z8, Z3, Z3
	VMOVUPS 192(R9), Z7
	VMULPS Z7, Z3, Z3
	VMOVUPS 192(SI), Z7
	VADDPS Z3, Z7, Z3
	VMOVUPS Z3, 192(DI)
	ADDQ $256, DI
	ADDQ $256, SI
	ADDQ $256, DX
	ADDQ $256, R9
	SUBQ $64, CX
	CMPQ CX, $64
	JAE  addcmulZ_four
addcmulZ_one:
	CMPQ CX, $16
	JB   addcmulZ_tail
	VMOVUPS 0(DX), Z0
	VMULPS Z8, Z0, Z0
	VMOVUPS 0(R9), Z4
	VMULPS Z4, Z0, Z0
	VMOVUPS 0(SI), Z4
	VADDPS Z0, Z4, Z0
	VMOVUPS Z0, 0(DI)
	ADDQ $64, DI
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, R9
	SUBQ $16, CX
	JMP  addcmulZ_one
addcmulZ_tail:
	TESTQ CX, CX
	JZ    addcmulZ_done
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1
	VMOVUPS.Z 0(DX), K1, Z0
	VMULPS Z8, Z0, Z0
	VMOVUPS.Z 0(R9), K1, Z4
	VMULPS Z4, Z0, Z0
	VMOVUPS.Z 0(SI), K1, Z4
	VADDPS Z0, Z4, Z0
	VMOVUPS Z0, K1, 0(DI)
addcmulZ_done:
	VZEROUPPER
	RET

// func addcdivZ(dst *float32, a *float32, b *float32, c *float32, n int, v float32)
//
// Sets dst_i = a_i + v·b_i/c_i.
TEXT ·addcdivZ(SB), NOSPLIT, $0-44
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ c+24(FP), R9
	MOVQ n+32(FP), CX
	VBROADCASTSS v+40(FP), Z8
	CMPQ CX, $64
	JB   addcdivZ_one
addcdivZ_four:
	VMOVUPS 0(DX), Z0
	VMULPS Z8, Z0, Z0
	VMOVUPS 0(R9), Z4
	VDIVPS Z4, Z0, Z0
	VMOVUPS 0(SI), Z4
	VADDPS Z0, Z4, Z0
	VMOVUPS Z0, 0(DI)
	VMOVUPS 64(DX), Z1
	VMULPS Z8, Z1, Z1
	VMOVUPS 64(R9), Z5
	VDIVPS Z5, Z1, Z1
	VMOVUPS 64(SI), Z5
	VADDPS Z1, Z5, Z1
	VMOVUPS Z1, 64(DI)
	VMOVUPS 128(DX), Z2
	VMULPS Z8, Z2, Z2
	VMOVUPS 128(R9), Z6
	VDIVPS Z6, Z2, Z2
	VMOVUPS 128(SI), Z6
	VADDPS Z2, Z6, Z2
	VMOVUPS Z2, 128(DI)
	VMOVUPS 192(DX), Z3
	VMULPS Z8, Z3, Z3
	VMOVUPS 192(R9), Z7
	VDIVPS Z7, Z3, Z3
	VMOVUPS 192(SI), Z7
	VADDPS Z3, Z7, Z3
	VMOVUPS Z3, 192(DI)
	ADDQ $256, DI
	ADDQ $256, SI
	ADDQ $256, DX
	ADDQ $256, R9
	SUBQ $64, CX
	CMPQ CX, $64
	JAE  addcdivZ_four
addcdivZ_one:
	CMPQ CX, $16
	JB   addcdivZ_tail
	VMOVUPS 0(DX), Z0
	VMULPS Z8, Z0, Z0
	VMOVUPS 0(R9), Z4
	VDIVPS Z4, Z0, Z0
	VMOVUPS 0(SI), Z4
	VADDPS Z0, Z4, Z0
	VMOVUPS Z0, 0(DI)
	ADDQ $64, DI
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, R9
	SUBQ $16, CX
	JMP  addcdivZ_one
addcdivZ_tail:
	TESTQ CX, CX
	JZ    addcdivZ_done
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1
	VMOVUPS.Z 0(DX), K1, Z0
	VMULPS Z8, Z0, Z0
	VMOVUPS.Z 0(R9), K1, Z4
	VDIVPS Z4, Z0, Z0
	VMOVUPS.Z 0(SI), K1, Z4
	VADDPS Z0, Z4, Z0
	VMOVUPS Z0, K1, 0(DI)
addcdivZ_done:
	VZEROUPPER
	RET
