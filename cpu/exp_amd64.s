//go:build amd64

#include "textflag.h"

// Vector float32 kernels for softmax and exp, for AVX2 and FMA, 8 lanes
// per YMM register. Every kernel takes a count n that is a positive
// multiple of 8; the Go wrappers in exp_amd64.go do the rest of a slice.
//
// exp(d) is computed as 2^k · e^r with k = round(d·log2(e)) and
// r = d - k·ln2, where ln2 is split in two float32 constants (Cody–Waite:
// ln2hi = float32(ln2), whose product with k is exact inside the FMA, and
// ln2lo = float32(ln2 - ln2hi)), so |r| ≤ ln2/2 to within rounding. e^r
// is 1 + r + r²·P(r) with P the degree-5 minimax polynomial of Cephes'
// expf, evaluated with FMA (about 1 ulp). The scale 2^k is built in the
// exponent field in two halves, 2^k1 · 2^k2 with k1 = k>>1, k2 = k - k1,
// both normal for the clamped range k ∈ [-152, 128]; the first product is
// exact and the second rounds once, so results that are subnormal are
// rounded correctly from e^r and results past MaxFloat32 overflow to +Inf
// in the multiply. d is clamped to [-105, 89] first (exp(-105) rounds to
// 0, exp(89) overflows), with the operand order that lets a NaN through:
// exp(NaN) = NaN, exp(-Inf) = 0, exp(+Inf) = +Inf.

#define LOG2E expc<>+0(SB)
#define LN2HI expc<>+32(SB)
#define LN2LO expc<>+64(SB)
#define EHI expc<>+96(SB)
#define ELO expc<>+128(SB)
#define ONE expc<>+160(SB)
#define C5 expc<>+192(SB)
#define C4 expc<>+224(SB)
#define C3 expc<>+256(SB)
#define C2 expc<>+288(SB)
#define C1 expc<>+320(SB)
#define C0 expc<>+352(SB)
#define BIAS expc<>+384(SB)
#define HI expc<>+416(SB)
#define LO expc<>+448(SB)

DATA expc<>+0(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA expc<>+8(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA expc<>+16(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA expc<>+24(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA expc<>+32(SB)/8, $0x3f3172183f317218
DATA expc<>+40(SB)/8, $0x3f3172183f317218
DATA expc<>+48(SB)/8, $0x3f3172183f317218
DATA expc<>+56(SB)/8, $0x3f3172183f317218
DATA expc<>+64(SB)/8, $0xb102e308b102e308
DATA expc<>+72(SB)/8, $0xb102e308b102e308
DATA expc<>+80(SB)/8, $0xb102e308b102e308
DATA expc<>+88(SB)/8, $0xb102e308b102e308
DATA expc<>+96(SB)/8, $0x3780000037800000
DATA expc<>+104(SB)/8, $0x3780000037800000
DATA expc<>+112(SB)/8, $0x3780000037800000
DATA expc<>+120(SB)/8, $0x3780000037800000
DATA expc<>+128(SB)/8, $0xb7800000b7800000
DATA expc<>+136(SB)/8, $0xb7800000b7800000
DATA expc<>+144(SB)/8, $0xb7800000b7800000
DATA expc<>+152(SB)/8, $0xb7800000b7800000
DATA expc<>+160(SB)/8, $0x3f8000003f800000
DATA expc<>+168(SB)/8, $0x3f8000003f800000
DATA expc<>+176(SB)/8, $0x3f8000003f800000
DATA expc<>+184(SB)/8, $0x3f8000003f800000
DATA expc<>+192(SB)/8, $0x3950696739506967
DATA expc<>+200(SB)/8, $0x3950696739506967
DATA expc<>+208(SB)/8, $0x3950696739506967
DATA expc<>+216(SB)/8, $0x3950696739506967
DATA expc<>+224(SB)/8, $0x3ab743ce3ab743ce
DATA expc<>+232(SB)/8, $0x3ab743ce3ab743ce
DATA expc<>+240(SB)/8, $0x3ab743ce3ab743ce
DATA expc<>+248(SB)/8, $0x3ab743ce3ab743ce
DATA expc<>+256(SB)/8, $0x3c0889083c088908
DATA expc<>+264(SB)/8, $0x3c0889083c088908
DATA expc<>+272(SB)/8, $0x3c0889083c088908
DATA expc<>+280(SB)/8, $0x3c0889083c088908
DATA expc<>+288(SB)/8, $0x3d2aa9c13d2aa9c1
DATA expc<>+296(SB)/8, $0x3d2aa9c13d2aa9c1
DATA expc<>+304(SB)/8, $0x3d2aa9c13d2aa9c1
DATA expc<>+312(SB)/8, $0x3d2aa9c13d2aa9c1
DATA expc<>+320(SB)/8, $0x3e2aaaaa3e2aaaaa
DATA expc<>+328(SB)/8, $0x3e2aaaaa3e2aaaaa
DATA expc<>+336(SB)/8, $0x3e2aaaaa3e2aaaaa
DATA expc<>+344(SB)/8, $0x3e2aaaaa3e2aaaaa
DATA expc<>+352(SB)/8, $0x3f0000003f000000
DATA expc<>+360(SB)/8, $0x3f0000003f000000
DATA expc<>+368(SB)/8, $0x3f0000003f000000
DATA expc<>+376(SB)/8, $0x3f0000003f000000
DATA expc<>+384(SB)/8, $0x0000007f0000007f
DATA expc<>+392(SB)/8, $0x0000007f0000007f
DATA expc<>+400(SB)/8, $0x0000007f0000007f
DATA expc<>+408(SB)/8, $0x0000007f0000007f
DATA expc<>+416(SB)/8, $0x42b2000042b20000
DATA expc<>+424(SB)/8, $0x42b2000042b20000
DATA expc<>+432(SB)/8, $0x42b2000042b20000
DATA expc<>+440(SB)/8, $0x42b2000042b20000
DATA expc<>+448(SB)/8, $0xc2d20000c2d20000
DATA expc<>+456(SB)/8, $0xc2d20000c2d20000
DATA expc<>+464(SB)/8, $0xc2d20000c2d20000
DATA expc<>+472(SB)/8, $0xc2d20000c2d20000
GLOBL expc<>(SB), RODATA|NOPTR, $480

// EXPSUB sets out = exp(x - m) for the 8 floats at off(SI) and stores it
// to off(DI) when R9 is not 0, with m in Y15, HI in Y12, LO in Y11 and
// Y0–Y7 as scratch (out must be none of them but Y6):
//
//	d = x - m (Y1), with e its rounding error (Y2) by TwoSum, clamped
//	  to ±2⁻¹⁶ (a NaN e, from an infinity, becomes 2⁻¹⁶);
//	d clamped to [LO, HI], a NaN staying NaN;
//	k = round(d·log2e) (Y4 as int32, Y3 as float), r = d - k·ln2 + e;
//	e^r = 1 + r + r²·P(r) (Y6);
//	out = e^r · 2^k1 · 2^k2.
#define EXPSUB(off, out) \
	VMOVUPS      off(SI), Y0    \
	VSUBPS       Y15, Y0, Y1    \
	VSUBPS       Y0, Y1, Y2     \
	VSUBPS       Y2, Y1, Y3     \
	VSUBPS       Y3, Y0, Y3     \
	VADDPS       Y15, Y2, Y2    \
	VSUBPS       Y2, Y3, Y2     \
	VMINPS       EHI, Y2, Y2    \
	VMAXPS       ELO, Y2, Y2    \
	VMINPS       Y1, Y12, Y1    \
	VMAXPS       Y1, Y11, Y1    \
	VMULPS       LOG2E, Y1, Y3  \
	VCVTPS2DQ    Y3, Y4         \
	VCVTDQ2PS    Y4, Y3         \
	VFNMADD231PS LN2HI, Y3, Y1  \
	VFNMADD231PS LN2LO, Y3, Y1  \
	VADDPS       Y2, Y1, Y1     \
	VMULPS       Y1, Y1, Y5     \
	VMOVUPS      C5, Y6         \
	VFMADD213PS  C4, Y1, Y6     \
	VFMADD213PS  C3, Y1, Y6     \
	VFMADD213PS  C2, Y1, Y6     \
	VFMADD213PS  C1, Y1, Y6     \
	VFMADD213PS  C0, Y1, Y6     \
	VFMADD213PS  Y1, Y5, Y6     \
	VADDPS       ONE, Y6, Y6    \
	VPSRAD       $1, Y4, Y7     \
	VPSUBD       Y7, Y4, Y4     \
	VPADDD       BIAS, Y7, Y7   \
	VPADDD       BIAS, Y4, Y4   \
	VPSLLD       $23, Y7, Y7    \
	VPSLLD       $23, Y4, Y4    \
	VMULPS       Y7, Y6, Y6     \
	VMULPS       Y4, Y6, out    \
	TESTQ        R9, R9         \
	JZ           2(PC)          \
	VMOVUPS      out, off(DI)

// ACCUM adds the 8 floats of Y(v) to the float64 sums in Y13 and Y14,
// using Y7 as scratch.
#define ACCUM(v, xv) \
	VCVTPS2PD    xv, Y7        \
	VADDPD       Y7, Y13, Y13  \
	VEXTRACTF128 $1, v, xv     \
	VCVTPS2PD    xv, Y7        \
	VADDPD       Y7, Y14, Y14

// func expSubAVX2(dst, x *float32, n int, m float32, store int) float64
//
// Computes e_i = exp(x_i - m), stores it to dst_i when store is not 0,
// and returns Σ e_i in float64. x_i - m is taken as the float32 d_i plus
// its rounding error (TwoSum), which is added to r, so e_i is as accurate
// as exp(d_i) itself even where d_i is large. When storing (softmax),
// 32 elements are done at a time and their four vectors added in float32
// (relative error ≤ 2·2⁻²⁴) before the float64 sums, then 8 at a time;
// without (log-softmax, where log Σ near 0 needs Σ to more than float32
// precision) each vector of 8 goes straight to the float64 sums.
TEXT ·expSubAVX2(SB), NOSPLIT, $0-48
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS m+24(FP), Y15
	MOVQ         store+32(FP), R9
	VMOVUPS      HI, Y12
	VMOVUPS      LO, Y11
	VXORPD       Y13, Y13, Y13
	VXORPD       Y14, Y14, Y14
	TESTQ        R9, R9
	JZ           loop1
	CMPQ         CX, $32
	JB           loop1

loop4:
	EXPSUB(0, Y8)
	EXPSUB(32, Y9)
	EXPSUB(64, Y10)
	EXPSUB(96, Y6)
	VADDPS Y8, Y9, Y9
	VADDPS Y10, Y6, Y6
	VADDPS Y9, Y6, Y6
	ACCUM(Y6, X6)
	ADDQ   $128, SI
	ADDQ   $128, DI
	SUBQ   $32, CX
	CMPQ   CX, $32
	JAE    loop4
	TESTQ  CX, CX
	JZ     done

loop1:
	EXPSUB(0, Y6)
	ACCUM(Y6, X6)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ  loop1

done:
	VADDPD       Y14, Y13, Y13
	VEXTRACTF128 $1, Y13, X14
	VADDPD       X14, X13, X13
	VUNPCKHPD    X13, X13, X14
	VADDSD       X14, X13, X13
	VMOVSD       X13, ret+40(FP)
	VZEROUPPER
	RET

// func maxAVX2(x *float32, n int) float32
//
// Returns the largest x_i, or NaN when any x_i is NaN.
TEXT ·maxAVX2(SB), NOSPLIT, $0-20
	MOVQ    x+0(FP), SI
	MOVQ    n+8(FP), CX
	VMOVUPS (SI), Y0
	VCMPPS  $3, Y0, Y0, Y1 // unordered: NaN lanes
	ADDQ    $32, SI
	SUBQ    $8, CX
	JZ      reduce

loop:
	VMOVUPS (SI), Y2
	VMAXPS  Y2, Y0, Y0
	VCMPPS  $3, Y2, Y2, Y3
	VORPS   Y3, Y1, Y1
	ADDQ    $32, SI
	SUBQ    $8, CX
	JNZ     loop

reduce:
	VMOVMSKPS    Y1, AX
	TESTL        AX, AX
	JNZ          nan
	VEXTRACTF128 $1, Y0, X2
	VMAXPS       X2, X0, X0
	VMOVHLPS     X0, X0, X2
	VMAXPS       X2, X0, X0
	VMOVSHDUP    X0, X2
	VMAXPS       X2, X0, X0
	VMOVSS       X0, ret+16(FP)
	VZEROUPPER
	RET

nan:
	MOVL $0x7fc00000, AX
	MOVL AX, ret+16(FP)
	VZEROUPPER
	RET

// func scaleAVX2(x *float32, n int, s float32)
//
// Multiplies every x_i by s.
TEXT ·scaleAVX2(SB), NOSPLIT, $0-20
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS s+16(FP), Y1

loop:
	VMULPS  (SI), Y1, Y0
	VMOVUPS Y0, (SI)
	ADDQ    $32, SI
	SUBQ    $8, CX
	JNZ     loop
	VZEROUPPER
	RET

// func subAVX2(dst, x *float32, n int, a, b float64)
//
// Sets dst_i = float32(float64(x_i) - a - b).
TEXT ·subAVX2(SB), NOSPLIT, $0-40
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSD a+24(FP), Y2
	VBROADCASTSD b+32(FP), Y3

loop:
	VCVTPS2PD  (SI), Y0
	VCVTPS2PD  16(SI), Y1
	VSUBPD     Y2, Y0, Y0
	VSUBPD     Y2, Y1, Y1
	VSUBPD     Y3, Y0, Y0
	VSUBPD     Y3, Y1, Y1
	VCVTPD2PSY Y0, X0
	VCVTPD2PSY Y1, X1
	VMOVUPS    X0, (DI)
	VMOVUPS    X1, 16(DI)
	ADDQ       $32, SI
	ADDQ       $32, DI
	SUBQ       $8, CX
	JNZ        loop
	VZEROUPPER
	RET

// The same kernels for AVX-512: the same algorithm and constants (read as
// broadcasts of their first lane), 16 lanes per ZMM register. Every one
// takes a count n that is a positive multiple of 16.

#define ZLOG2E expc<>+0(SB)
#define ZLN2HI expc<>+32(SB)
#define ZLN2LO expc<>+64(SB)
#define ZEHI expc<>+96(SB)
#define ZELO expc<>+128(SB)
#define ZONE expc<>+160(SB)
#define ZC5 expc<>+192(SB)
#define ZC4 expc<>+224(SB)
#define ZC3 expc<>+256(SB)
#define ZC2 expc<>+288(SB)
#define ZC1 expc<>+320(SB)
#define ZC0 expc<>+352(SB)
#define ZHI expc<>+416(SB)
#define ZLO expc<>+448(SB)

// ZEXPSUB is EXPSUB on 16 lanes: out = exp(x - m) for the 16 floats at
// off(SI), stored to off(DI) when R9 is not 0, with m in Z15, HI in Z12,
// LO in Z11 and Z0–Z7 as scratch (out must be none of them but Z6). Two
// AVX-512 instructions shorten it: k is rounded in place (VRNDSCALEPS)
// rather than through int32, and e^r · 2^k is one VSCALEFPS, which
// rounds once as the two products of EXPSUB do (subnormal results
// included, and +Inf past MaxFloat32), so the results are the same.
#define ZEXPSUB(off, out) \
	VMOVUPS           off(SI), Z0    \
	VSUBPS            Z15, Z0, Z1    \
	VSUBPS            Z0, Z1, Z2     \
	VSUBPS            Z2, Z1, Z3     \
	VSUBPS            Z3, Z0, Z3     \
	VADDPS            Z15, Z2, Z2    \
	VSUBPS            Z2, Z3, Z2     \
	VMINPS.BCST       ZEHI, Z2, Z2   \
	VMAXPS.BCST       ZELO, Z2, Z2   \
	VMINPS            Z1, Z12, Z1    \
	VMAXPS            Z1, Z11, Z1    \
	VMULPS.BCST       ZLOG2E, Z1, Z3 \
	VRNDSCALEPS       $0, Z3, Z3     \
	VFNMADD231PS.BCST ZLN2HI, Z3, Z1 \
	VFNMADD231PS.BCST ZLN2LO, Z3, Z1 \
	VADDPS            Z2, Z1, Z1     \
	VMULPS            Z1, Z1, Z5     \
	VBROADCASTSS      ZC5, Z6        \
	VFMADD213PS.BCST  ZC4, Z1, Z6    \
	VFMADD213PS.BCST  ZC3, Z1, Z6    \
	VFMADD213PS.BCST  ZC2, Z1, Z6    \
	VFMADD213PS.BCST  ZC1, Z1, Z6    \
	VFMADD213PS.BCST  ZC0, Z1, Z6    \
	VFMADD213PS       Z1, Z5, Z6     \
	VADDPS.BCST       ZONE, Z6, Z6   \
	VSCALEFPS         Z3, Z6, out    \
	TESTQ             R9, R9         \
	JZ                2(PC)          \
	VMOVUPS           out, off(DI)

// ZACCUM adds the 16 floats of Z(v) to the float64 sums in Z13 and Z14,
// using Z7 as scratch.
#define ZACCUM(v, yv) \
	VCVTPS2PD     yv, Z7        \
	VADDPD        Z7, Z13, Z13  \
	VEXTRACTF32X8 $1, v, Y7     \
	VCVTPS2PD     Y7, Z7        \
	VADDPD        Z7, Z14, Z14

// func expSubAVX512(dst, x *float32, n int, m float32, store int) float64
//
// expSubAVX2 on 16 lanes: 64 elements at a time when storing, their
// four vectors added in float32 before the float64 sums, else 16. When
// storing it prefetches dst 4 KiB ahead, as maxAVX512 does x.
TEXT ·expSubAVX512(SB), NOSPLIT, $0-48
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS m+24(FP), Z15
	MOVQ         store+32(FP), R9
	VBROADCASTSS ZHI, Z12
	VBROADCASTSS ZLO, Z11
	VPXORQ       Z13, Z13, Z13
	VPXORQ       Z14, Z14, Z14
	TESTQ        R9, R9
	JZ           loop1
	CMPQ         CX, $64
	JB           loop1

loop4:
	PREFETCHT0 4096(DI)
	PREFETCHT0 4160(DI)
	PREFETCHT0 4224(DI)
	PREFETCHT0 4288(DI)
	ZEXPSUB(0, Z8)
	ZEXPSUB(64, Z9)
	ZEXPSUB(128, Z10)
	ZEXPSUB(192, Z6)
	VADDPS Z8, Z9, Z9
	VADDPS Z10, Z6, Z6
	VADDPS Z9, Z6, Z6
	ZACCUM(Z6, Y6)
	ADDQ   $256, SI
	ADDQ   $256, DI
	SUBQ   $64, CX
	CMPQ   CX, $64
	JAE    loop4
	TESTQ  CX, CX
	JZ     done

loop1:
	ZEXPSUB(0, Z6)
	ZACCUM(Z6, Y6)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JNZ  loop1

done:
	VADDPD        Z14, Z13, Z13
	VEXTRACTF64X4 $1, Z13, Y14
	VADDPD        Y14, Y13, Y13
	VEXTRACTF128  $1, Y13, X14
	VADDPD        X14, X13, X13
	VUNPCKHPD     X13, X13, X14
	VADDSD        X14, X13, X13
	VMOVSD        X13, ret+40(FP)
	VZEROUPPER
	RET

// func maxAVX512(x *float32, n int) float32
//
// Returns the largest x_i, or NaN when any x_i is NaN. It is the first
// pass over a softmax line, so it prefetches 4 KiB ahead: the hardware
// prefetchers stop at page boundaries, and in a softmax over rows of 1024
// floats every row starts a page (a prefetch past the end of x is
// harmless; it never faults).
TEXT ·maxAVX512(SB), NOSPLIT, $0-20
	MOVQ    x+0(FP), SI
	MOVQ    n+8(FP), CX
	VMOVUPS (SI), Z0
	VCMPPS  $3, Z0, Z0, K1 // unordered: NaN lanes
	ADDQ    $64, SI
	SUBQ    $16, CX
	JZ      reduce

loop:
	PREFETCHT0 4096(SI)
	VMOVUPS    (SI), Z2
	VMAXPS     Z2, Z0, Z0
	VCMPPS     $3, Z2, Z2, K2
	KORW    K2, K1, K1
	ADDQ    $64, SI
	SUBQ    $16, CX
	JNZ     loop

reduce:
	KMOVW         K1, AX
	TESTL         AX, AX
	JNZ           nan
	VEXTRACTF32X8 $1, Z0, Y2
	VMAXPS        Y2, Y0, Y0
	VEXTRACTF128  $1, Y0, X2
	VMAXPS        X2, X0, X0
	VMOVHLPS      X0, X0, X2
	VMAXPS        X2, X0, X0
	VMOVSHDUP     X0, X2
	VMAXPS        X2, X0, X0
	VMOVSS        X0, ret+16(FP)
	VZEROUPPER
	RET

nan:
	MOVL $0x7fc00000, AX
	MOVL AX, ret+16(FP)
	VZEROUPPER
	RET

// func scaleAVX512(x *float32, n int, s float32)
//
// Multiplies every x_i by s.
TEXT ·scaleAVX512(SB), NOSPLIT, $0-20
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS s+16(FP), Z1

loop:
	VMULPS  (SI), Z1, Z0
	VMOVUPS Z0, (SI)
	ADDQ    $64, SI
	SUBQ    $16, CX
	JNZ     loop
	VZEROUPPER
	RET
