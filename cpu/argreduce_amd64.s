#include "textflag.h"

// The AVX-512 loops of the float32 arg-reduction runs (argreduce.go):
// 16 lanes at a time, the last ones masked. The comparisons are ordered
// and quiet (GT_OQ, LT_OQ: false when either side is a NaN), plus a
// NaN row element (UNORD_Q with itself) where best is a number (ORD_Q).

// func argMaxRunsZ(best *float32, at *int32, row *float32, n int, k int32)
//
// Where row_i beats best_i (greater, or a NaN where best_i is not), sets best_i = row_i and
// at_i = k, for i in [0, n).
TEXT ·argMaxRunsZ(SB), NOSPLIT, $0-36
	MOVQ best+0(FP), DI
	MOVQ at+8(FP), SI
	MOVQ row+16(FP), DX
	MOVQ n+24(FP), CX
	MOVL k+32(FP), AX
	VPBROADCASTD AX, Z8
argMaxRunsZ_one:
	CMPQ CX, $16
	JB   argMaxRunsZ_tail
	VMOVUPS 0(DX), Z0
	VMOVUPS 0(DI), Z1
	VCMPPS  $0x1e, Z1, Z0, K1
	VCMPPS  $0x03, Z0, Z0, K2
	VCMPPS  $0x07, Z1, Z1, K3
	KANDW   K2, K3, K2
	KORW    K1, K2, K1
	VMOVUPS Z0, K1, 0(DI)
	VMOVDQU32 Z8, K1, 0(SI)
	ADDQ $64, DI
	ADDQ $64, SI
	ADDQ $64, DX
	SUBQ $16, CX
	JMP  argMaxRunsZ_one
argMaxRunsZ_tail:
	TESTQ CX, CX
	JZ    argMaxRunsZ_done
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K4
	VMOVUPS.Z 0(DX), K4, Z0
	VMOVUPS.Z 0(DI), K4, Z1
	VCMPPS  $0x1e, Z1, Z0, K1
	VCMPPS  $0x03, Z0, Z0, K2
	VCMPPS  $0x07, Z1, Z1, K3
	KANDW   K2, K3, K2
	KORW    K1, K2, K1
	KANDW   K4, K1, K1
	VMOVUPS Z0, K1, 0(DI)
	VMOVDQU32 Z8, K1, 0(SI)
argMaxRunsZ_done:
	VZEROUPPER
	RET

// func argMinRunsZ(best *float32, at *int32, row *float32, n int, k int32)
//
// Where row_i beats best_i (smaller, or a NaN where best_i is not), sets best_i = row_i and
// at_i = k, for i in [0, n).
TEXT ·argMinRunsZ(SB), NOSPLIT, $0-36
	MOVQ best+0(FP), DI
	MOVQ at+8(FP), SI
	MOVQ row+16(FP), DX
	MOVQ n+24(FP), CX
	MOVL k+32(FP), AX
	VPBROADCASTD AX, Z8
argMinRunsZ_one:
	CMPQ CX, $16
	JB   argMinRunsZ_tail
	VMOVUPS 0(DX), Z0
	VMOVUPS 0(DI), Z1
	VCMPPS  $0x11, Z1, Z0, K1
	VCMPPS  $0x03, Z0, Z0, K2
	VCMPPS  $0x07, Z1, Z1, K3
	KANDW   K2, K3, K2
	KORW    K1, K2, K1
	VMOVUPS Z0, K1, 0(DI)
	VMOVDQU32 Z8, K1, 0(SI)
	ADDQ $64, DI
	ADDQ $64, SI
	ADDQ $64, DX
	SUBQ $16, CX
	JMP  argMinRunsZ_one
argMinRunsZ_tail:
	TESTQ CX, CX
	JZ    argMinRunsZ_done
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K4
	VMOVUPS.Z 0(DX), K4, Z0
	VMOVUPS.Z 0(DI), K4, Z1
	VCMPPS  $0x11, Z1, Z0, K1
	VCMPPS  $0x03, Z0, Z0, K2
	VCMPPS  $0x07, Z1, Z1, K3
	KANDW   K2, K3, K2
	KORW    K1, K2, K1
	KANDW   K4, K1, K1
	VMOVUPS Z0, K1, 0(DI)
	VMOVDQU32 Z8, K1, 0(SI)
argMinRunsZ_done:
	VZEROUPPER
	RET
