#include "textflag.h"

// func addBlockZ(dst *float32, drs int, src *float32, srs int, rows int, n int)
//
// The AVX-512 loop of addBlock (im2col.go) for contiguous rows:
// dst[r·drs + q] += src[r·srs + q] for r < rows and q < n, 16 lanes at a
// time and the last n mod 16 masked, dst the first operand of each add.
TEXT ·addBlockZ(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ drs+8(FP), R8
	MOVQ src+16(FP), SI
	MOVQ srs+24(FP), R9
	MOVQ rows+32(FP), R10
	MOVQ n+40(FP), R11
	SHLQ $2, R8
	SHLQ $2, R9
	MOVQ R11, CX
	ANDQ $15, CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1
	SHRQ $4, R11
addBlockZ_row:
	TESTQ R10, R10
	JZ    addBlockZ_done
	MOVQ  DI, R12
	MOVQ  SI, R13
	MOVQ  R11, R14
addBlockZ_vec:
	TESTQ R14, R14
	JZ    addBlockZ_tail
	VMOVUPS 0(R12), Z0
	VADDPS  0(R13), Z0, Z0
	VMOVUPS Z0, 0(R12)
	ADDQ $64, R12
	ADDQ $64, R13
	DECQ R14
	JMP  addBlockZ_vec
addBlockZ_tail:
	KORTESTW K1, K1
	JZ       addBlockZ_next
	VMOVUPS.Z 0(R12), K1, Z0
	VMOVUPS.Z 0(R13), K1, Z1
	VADDPS    Z1, Z0, Z0
	VMOVUPS   Z0, K1, 0(R12)
addBlockZ_next:
	ADDQ R8, DI
	ADDQ R9, SI
	DECQ R10
	JMP  addBlockZ_row
addBlockZ_done:
	VZEROUPPER
	RET
