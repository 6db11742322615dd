//go:build amd64

#include "textflag.h"

// Packing kernels for the float32 GEMM (AVX2) that transpose: eight k
// steps at a time through the usual 8×8 transpose of YMM registers
// (unpack, shuffle, swap lanes), single k steps in scalar code.

// TRANSPOSE8 transposes the 8×8 matrix in Y0–Y7 (row i in Yi) into
// Y8–Y15 (row i in Y(8+i)); Y0–Y7 are clobbered. With rows a…h: unpack
// pairs (a0 b0 a1 b1 | a4 b4 a5 b5, …), shuffle those into quarter
// columns (a0 b0 c0 d0 | a4 b4 c4 d4, …), and join the 128-bit lanes
// (a0 … h0). With Y6 = Y4 and Y7 = Y5 it transposes the 6×8 matrix in
// Y0–Y5, elements 6 and 7 of each result row being copies of 4 and 5.
#define TRANSPOSE8 \
	VUNPCKLPS  Y1, Y0, Y8          \
	VUNPCKHPS  Y1, Y0, Y9          \
	VUNPCKLPS  Y3, Y2, Y10         \
	VUNPCKHPS  Y3, Y2, Y11         \
	VUNPCKLPS  Y5, Y4, Y12         \
	VUNPCKHPS  Y5, Y4, Y13         \
	VUNPCKLPS  Y7, Y6, Y14         \
	VUNPCKHPS  Y7, Y6, Y15         \
	VSHUFPS    $0x44, Y10, Y8, Y0  \
	VSHUFPS    $0xEE, Y10, Y8, Y1  \
	VSHUFPS    $0x44, Y11, Y9, Y2  \
	VSHUFPS    $0xEE, Y11, Y9, Y3  \
	VSHUFPS    $0x44, Y14, Y12, Y4 \
	VSHUFPS    $0xEE, Y14, Y12, Y5 \
	VSHUFPS    $0x44, Y15, Y13, Y6 \
	VSHUFPS    $0xEE, Y15, Y13, Y7 \
	VPERM2F128 $0x20, Y4, Y0, Y8   \
	VPERM2F128 $0x20, Y5, Y1, Y9   \
	VPERM2F128 $0x20, Y6, Y2, Y10  \
	VPERM2F128 $0x20, Y7, Y3, Y11  \
	VPERM2F128 $0x31, Y4, Y0, Y12  \
	VPERM2F128 $0x31, Y5, Y1, Y13  \
	VPERM2F128 $0x31, Y6, Y2, Y14  \
	VPERM2F128 $0x31, Y7, Y3, Y15

// func packA6(dst, src *float32, rs, kc int)
//
// packA6 packs six rows of A (src, src+rs, …, src+5·rs, each kc
// contiguous floats) into dst as kc groups of six: dst[6p+i] = row i [p].
TEXT ·packA6(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rs+16(FP), R8
	MOVQ kc+24(FP), CX
	SHLQ $2, R8
	LEAQ (SI)(R8*1), R9  // row 1
	LEAQ (SI)(R8*2), R10 // row 2
	LEAQ (R9)(R8*2), R11 // row 3
	LEAQ (SI)(R8*4), R12 // row 4
	LEAQ (R9)(R8*4), R13 // row 5
	XORQ AX, AX          // byte offset in the rows

vec:
	// Each group is stored as eight floats, the last two spilling into
	// the next group, which is written later: so only while more than
	// eight steps are left.
	CMPQ    CX, $8
	JLE     tail
	VMOVUPS (SI)(AX*1), Y0
	VMOVUPS (R9)(AX*1), Y1
	VMOVUPS (R10)(AX*1), Y2
	VMOVUPS (R11)(AX*1), Y3
	VMOVUPS (R12)(AX*1), Y4
	VMOVUPS (R13)(AX*1), Y5
	VMOVAPS Y4, Y6
	VMOVAPS Y5, Y7
	TRANSPOSE8
	VMOVUPS Y8, (DI)
	VMOVUPS Y9, 24(DI)
	VMOVUPS Y10, 48(DI)
	VMOVUPS Y11, 72(DI)
	VMOVUPS Y12, 96(DI)
	VMOVUPS Y13, 120(DI)
	VMOVUPS Y14, 144(DI)
	VMOVUPS Y15, 168(DI)
	ADDQ    $32, AX
	ADDQ    $192, DI
	SUBQ    $8, CX
	JMP     vec

tail:
	TESTQ  CX, CX
	JZ     done
	VMOVSS (SI)(AX*1), X0
	VMOVSS (R9)(AX*1), X1
	VMOVSS (R10)(AX*1), X2
	VMOVSS (R11)(AX*1), X3
	VMOVSS (R12)(AX*1), X4
	VMOVSS (R13)(AX*1), X5
	VMOVSS X0, (DI)
	VMOVSS X1, 4(DI)
	VMOVSS X2, 8(DI)
	VMOVSS X3, 12(DI)
	VMOVSS X4, 16(DI)
	VMOVSS X5, 20(DI)
	ADDQ   $4, AX
	ADDQ   $24, DI
	DECQ   CX
	JMP    tail

done:
	VZEROUPPER
	RET

// LOAD8 loads eight floats at offset off of the eight columns starting at
// P (columns P, P+R8, P+2·R8, P+BX; then Q, … with Q = P+4·R8).
#define LOAD8(P, Q, off) \
	VMOVUPS off(P), Y0          \
	VMOVUPS off(P)(R8*1), Y1    \
	VMOVUPS off(P)(R8*2), Y2    \
	VMOVUPS off(P)(BX*1), Y3    \
	VMOVUPS off(Q), Y4          \
	VMOVUPS off(Q)(R8*1), Y5    \
	VMOVUPS off(Q)(R8*2), Y6    \
	VMOVUPS off(Q)(BX*1), Y7

// STORE8 stores Y8–Y15 as the first or second half (off 0 or 32) of
// eight consecutive 16-float groups at DI.
#define STORE8(off) \
	VMOVUPS Y8, off(DI)      \
	VMOVUPS Y9, off+64(DI)   \
	VMOVUPS Y10, off+128(DI) \
	VMOVUPS Y11, off+192(DI) \
	VMOVUPS Y12, off+256(DI) \
	VMOVUPS Y13, off+320(DI) \
	VMOVUPS Y14, off+384(DI) \
	VMOVUPS Y15, off+448(DI)

// COPY1 copies the float at src to off(DI).
#define COPY1(src, off) \
	VMOVSS src, X0 \
	VMOVSS X0, off(DI)

// func packB16T(dst, src *float32, cs, kc int)
//
// packB16T packs sixteen columns of B (src, src+cs, …, src+15·cs, each kc
// contiguous floats: B transposed in memory) into dst as kc groups of
// sixteen: dst[16p+j] = column j [p].
TEXT ·packB16T(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ cs+16(FP), R8
	MOVQ kc+24(FP), CX
	SHLQ $2, R8
	LEAQ (R8)(R8*2), BX  // 3 columns
	LEAQ (SI)(R8*4), R9  // column 4
	LEAQ (SI)(R8*8), R10 // column 8
	LEAQ (R9)(R8*8), R11 // column 12

vec:
	CMPQ CX, $8
	JLT  tail
	LOAD8(SI, R9, 0)
	TRANSPOSE8
	STORE8(0)
	LOAD8(R10, R11, 0)
	TRANSPOSE8
	STORE8(32)
	ADDQ $32, SI
	ADDQ $32, R9
	ADDQ $32, R10
	ADDQ $32, R11
	ADDQ $512, DI
	SUBQ $8, CX
	JMP  vec

tail:
	TESTQ CX, CX
	JZ    done
	COPY1((SI), 0)
	COPY1((SI)(R8*1), 4)
	COPY1((SI)(R8*2), 8)
	COPY1((SI)(BX*1), 12)
	COPY1((R9), 16)
	COPY1((R9)(R8*1), 20)
	COPY1((R9)(R8*2), 24)
	COPY1((R9)(BX*1), 28)
	COPY1((R10), 32)
	COPY1((R10)(R8*1), 36)
	COPY1((R10)(R8*2), 40)
	COPY1((R10)(BX*1), 44)
	COPY1((R11), 48)
	COPY1((R11)(R8*1), 52)
	COPY1((R11)(R8*2), 56)
	COPY1((R11)(BX*1), 60)
	ADDQ  $4, SI
	ADDQ  $4, R9
	ADDQ  $4, R10
	ADDQ  $4, R11
	ADDQ  $64, DI
	DECQ  CX
	JMP   tail

done:
	VZEROUPPER
	RET

// COPY16 copies sixteen floats from (AX) to off(R11) and moves AX on by
// R8.
#define COPY16(off) \
	VMOVUPS (AX), Y0       \
	VMOVUPS 32(AX), Y1     \
	VMOVUPS Y0, off(R11)   \
	VMOVUPS Y1, off+32(R11) \
	ADDQ    R8, AX

// func packB16(dst, src *float32, rs, kc, np int)
//
// packB16 packs np panels of sixteen columns of B from kc rows, rs apart
// from src, of 16·np contiguous floats: panel q at dst+16·kc·q holds
// dst[16p+j] = src[p·rs+16q+j]. It goes eight rows at a time across all
// the panels, so that the rows are read sequentially.
TEXT ·packB16(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rs+16(FP), R8
	MOVQ kc+24(FP), CX
	MOVQ np+32(FP), DX
	SHLQ $2, R8
	MOVQ CX, R9
	SHLQ $6, R9 // panel stride: 64·kc bytes

blockB:
	CMPQ CX, $8
	JLT  restB
	MOVQ SI, R10 // panel q's first row
	MOVQ DI, R11 // panel q's first group
	MOVQ DX, R12

panelB8:
	MOVQ R10, AX
	COPY16(0)
	COPY16(64)
	COPY16(128)
	COPY16(192)
	COPY16(256)
	COPY16(320)
	COPY16(384)
	COPY16(448)
	ADDQ $64, R10
	ADDQ R9, R11
	DECQ R12
	JNZ  panelB8
	LEAQ (SI)(R8*8), SI
	ADDQ $512, DI
	SUBQ $8, CX
	JMP  blockB

restB:
	TESTQ CX, CX
	JZ    doneB
	MOVQ  SI, R10
	MOVQ  DI, R11
	MOVQ  DX, R12

panelB1:
	MOVQ R10, AX
	MOVQ CX, R13

rowB1:
	COPY16(0)
	ADDQ $64, R11
	DECQ R13
	JNZ  rowB1
	// back to this panel's first group, then on to the next panel
	MOVQ CX, R13
	SHLQ $6, R13
	SUBQ R13, R11
	ADDQ $64, R10
	ADDQ R9, R11
	DECQ R12
	JNZ  panelB1

doneB:
	VZEROUPPER
	RET

// COPY6 copies six floats from (AX) to off(R11) and moves AX on by R8.
#define COPY6(off) \
	MOVUPS (AX), X0      \
	MOVQ   16(AX), X1    \
	MOVUPS X0, off(R11)  \
	MOVQ   X1, off+16(R11) \
	ADDQ   R8, AX

// func packA6T(dst, src *float32, cs, kc, np int)
//
// packA6T packs np panels of six rows of A from kc columns, cs apart from
// src, of 6·np contiguous floats (A transposed in memory): panel q at
// dst+q·6·kc holds dst[6p+i] = src[p·cs+6q+i]. It goes eight columns at a
// time across all the panels, so that the columns read stay in L1.
TEXT ·packA6T(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ cs+16(FP), R8
	MOVQ kc+24(FP), CX
	MOVQ np+32(FP), DX
	SHLQ $2, R8
	LEAQ (CX)(CX*2), R9
	SHLQ $3, R9 // panel stride: 24·kc bytes

block:
	CMPQ CX, $8
	JLT  rest
	MOVQ SI, R10 // panel q's first column
	MOVQ DI, R11 // panel q's first group
	MOVQ DX, R12

panel8:
	MOVQ R10, AX
	COPY6(0)
	COPY6(24)
	COPY6(48)
	COPY6(72)
	COPY6(96)
	COPY6(120)
	COPY6(144)
	COPY6(168)
	ADDQ $24, R10
	ADDQ R9, R11
	DECQ R12
	JNZ  panel8
	LEAQ (SI)(R8*8), SI
	ADDQ $192, DI
	SUBQ $8, CX
	JMP  block

rest:
	TESTQ CX, CX
	JZ    doneA
	MOVQ  SI, R10
	MOVQ  DI, R11
	MOVQ  DX, R12

panel1:
	MOVQ R10, AX
	MOVQ CX, R13

col1:
	COPY6(0)
	ADDQ $24, R11
	DECQ R13
	JNZ  col1
	// back to this panel's first group, then on to the next panel
	LEAQ (CX)(CX*2), R13
	SHLQ $3, R13
	SUBQ R13, R11
	ADDQ $24, R10
	ADDQ R9, R11
	DECQ R12
	JNZ  panel1

doneA:
	RET
