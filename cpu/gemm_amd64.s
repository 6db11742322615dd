//go:build amd64

#include "textflag.h"

// The float32 GEMM micro-kernel for AVX2 and FMA: one 6×16 block of C.
//
// a is a packed A panel: k steps of 6 floats (one column of six rows of
// A); b a packed B panel: k steps of 16 floats (one row of sixteen columns
// of B). The block is held in Y4–Y15 (row i in Y(4+2i), Y(5+2i)); each k
// step loads the B row into Y0, Y1 and broadcasts each A value in turn
// into Y2 or Y3. The block is then stored to c (row stride ldc floats),
// or added to what c holds when accum is not 0.

#define STEP(ao, bo) \
	VMOVUPS      bo(DI), Y0     \
	VMOVUPS      bo+32(DI), Y1  \
	VBROADCASTSS ao(SI), Y2     \
	VFMADD231PS  Y0, Y2, Y4     \
	VFMADD231PS  Y1, Y2, Y5     \
	VBROADCASTSS ao+4(SI), Y3   \
	VFMADD231PS  Y0, Y3, Y6     \
	VFMADD231PS  Y1, Y3, Y7     \
	VBROADCASTSS ao+8(SI), Y2   \
	VFMADD231PS  Y0, Y2, Y8     \
	VFMADD231PS  Y1, Y2, Y9     \
	VBROADCASTSS ao+12(SI), Y3  \
	VFMADD231PS  Y0, Y3, Y10    \
	VFMADD231PS  Y1, Y3, Y11    \
	VBROADCASTSS ao+16(SI), Y2  \
	VFMADD231PS  Y0, Y2, Y12    \
	VFMADD231PS  Y1, Y2, Y13    \
	VBROADCASTSS ao+20(SI), Y3  \
	VFMADD231PS  Y0, Y3, Y14    \
	VFMADD231PS  Y1, Y3, Y15

// STOREROW writes (or adds to) one row of the block at (DX) and moves DX
// to the next row.
#define STOREROW(lo, hi) \
	TESTQ   R9, R9          \
	JZ      3(PC)           \
	VADDPS  (DX), lo, lo    \
	VADDPS  32(DX), hi, hi  \
	VMOVUPS lo, (DX)        \
	VMOVUPS hi, 32(DX)      \
	ADDQ    R8, DX

// func sgemmKernel6x16(k int, a, b, c *float32, ldc int, accum int)
TEXT ·sgemmKernel6x16(SB), NOSPLIT, $0-48
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ c+24(FP), DX
	MOVQ ldc+32(FP), R8
	MOVQ accum+40(FP), R9
	SHLQ $2, R8

	// Touch the rows of C that the block ends with, so their lines are
	// on the way while the products run.
	MOVQ        DX, AX
	PREFETCHT0  (AX)
	PREFETCHT0  60(AX)
	ADDQ        R8, AX
	PREFETCHT0  (AX)
	PREFETCHT0  60(AX)
	ADDQ        R8, AX
	PREFETCHT0  (AX)
	PREFETCHT0  60(AX)
	ADDQ        R8, AX
	PREFETCHT0  (AX)
	PREFETCHT0  60(AX)
	ADDQ        R8, AX
	PREFETCHT0  (AX)
	PREFETCHT0  60(AX)
	ADDQ        R8, AX
	PREFETCHT0  (AX)
	PREFETCHT0  60(AX)

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

	MOVQ CX, BX
	SHRQ $2, BX
	JZ   tail

loop4:
	PREFETCHT0 384(DI)
	STEP(0, 0)
	STEP(24, 64)
	PREFETCHT0 448(DI)
	STEP(48, 128)
	STEP(72, 192)
	ADDQ $96, SI
	ADDQ $256, DI
	DECQ BX
	JNZ  loop4

tail:
	ANDQ $3, CX
	JZ   store

loop1:
	STEP(0, 0)
	ADDQ $24, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  loop1

store:
	STOREROW(Y4, Y5)
	STOREROW(Y6, Y7)
	STOREROW(Y8, Y9)
	STOREROW(Y10, Y11)
	STOREROW(Y12, Y13)
	STOREROW(Y14, Y15)
	VZEROUPPER
	RET
