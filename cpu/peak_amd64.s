//go:build amd64

#include "textflag.h"

// FMA throughput probes: n iterations of twelve independent fused
// multiply-adds (enough chains to cover the FMA latency on every current
// core), on 256-bit (fmaLoopY) or 512-bit (fmaLoopZ) registers. Each
// iteration is 12·8·2 (Y) or 12·16·2 (Z) float32 flops.

#define FMASY \
	VFMADD231PS Y0, Y1, Y4  \
	VFMADD231PS Y0, Y1, Y5  \
	VFMADD231PS Y0, Y1, Y6  \
	VFMADD231PS Y0, Y1, Y7  \
	VFMADD231PS Y0, Y1, Y8  \
	VFMADD231PS Y0, Y1, Y9  \
	VFMADD231PS Y0, Y1, Y10  \
	VFMADD231PS Y0, Y1, Y11  \
	VFMADD231PS Y0, Y1, Y12  \
	VFMADD231PS Y0, Y1, Y13  \
	VFMADD231PS Y0, Y1, Y14  \
	VFMADD231PS Y0, Y1, Y15

#define FMASZ \
	VFMADD231PS Z0, Z1, Z4  \
	VFMADD231PS Z0, Z1, Z5  \
	VFMADD231PS Z0, Z1, Z6  \
	VFMADD231PS Z0, Z1, Z7  \
	VFMADD231PS Z0, Z1, Z8  \
	VFMADD231PS Z0, Z1, Z9  \
	VFMADD231PS Z0, Z1, Z10  \
	VFMADD231PS Z0, Z1, Z11  \
	VFMADD231PS Z0, Z1, Z12  \
	VFMADD231PS Z0, Z1, Z13  \
	VFMADD231PS Z0, Z1, Z14  \
	VFMADD231PS Z0, Z1, Z15

// func fmaLoopY(n int)
TEXT ·fmaLoopY(SB), NOSPLIT, $0-8
	MOVQ   n+0(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1

loopY:
	FMASY
	DECQ CX
	JNZ  loopY
	VZEROUPPER
	RET

// func fmaLoopZ(n int)
TEXT ·fmaLoopZ(SB), NOSPLIT, $0-8
	MOVQ   n+0(FP), CX
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1

loopZ:
	FMASZ
	DECQ CX
	JNZ  loopZ
	VZEROUPPER
	RET
