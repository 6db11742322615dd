"""Generates cpu/gemm_avx512_amd64.s, the AVX-512 GEMM micro-kernels.

The kernels for w = 4, 3, 2, 1 register-wide B panels, float32 and
float64, differ only in which registers and instructions they name, so
they are written out from one template here rather than by hand:

    python3 tools/asmgen/gemm_avx512.py cpu/gemm_avx512_amd64.s
"""
import sys
def gen(out, D):
    p = out.append
    f32 = D == "s"
    L = 16 if f32 else 8          # lanes per ZMM
    E = 4 if f32 else 8           # bytes per element
    PS = "PS" if f32 else "PD"
    BC = "VBROADCASTSS" if f32 else "VBROADCASTSD"
    KMOV = "KMOVW"
    T = "float32" if f32 else "float64"
    mtype = "uint16"
    pre = f"{D}gemm"
    def epirow(w, acc, relu):
        return f"{D.upper()}EPIROW{w}{'A' if acc else 'P'}{'R' if relu else ''}"
    def loads(w, bo):
        r = [f"VMOVUP{PS[1]} (DI), Z0", f"VMOVUP{PS[1]} (DI)(R10*1), Z1",
             f"VMOVUP{PS[1]} (DI)(R10*2), Z2", f"VMOVUP{PS[1]} (DI)(R11*1), Z3"]
        return r[:w]
    for w in (4, 3, 2, 1):
        lines = loads(w, "")
        arows = ["(SI)", "(SI)(R13*1)", "(SI)(R13*2)", "(AX)", "(AX)(R13*1)", "(AX)(R13*2)"]
        for i in range(6):
            bz = "Z4" if i % 2 == 0 else "Z5"
            lines.append(f"{BC} {arows[i]}, {bz}")
            for j in range(w):
                lines.append(f"VFMADD231{PS} Z{j}, {bz}, Z{8+4*i+j}")
        lines += ["ADDQ R9, SI", "ADDQ R9, AX", "ADDQ R12, DI"]
        p(f"#define {D.upper()}STEP{w} \\")
        p(" \\\n".join("\t" + l for l in lines))
        p("")
    def row(name, w, acc, bias=False, relu=False):
        # A row of w registers stored to C (DX): C added first when
        # accumulating; with bias, the bias (Z0-Z3) added, then, with
        # relu, max(x, 0) and +0 (Z4) as reluZ computes them.
        args = ", ".join(f"r{j}" for j in range(w))
        lines = []
        for j in range(w):
            off = f"{64*j}(DX)" if j else "(DX)"
            k = "" if j < w - 1 else "K1, "
            if acc:
                lines.append(f"VADD{PS} {off}, r{j}, {k}r{j}")
            if bias:
                lines.append(f"VADD{PS} Z{j}, r{j}, r{j}")
            if relu:
                lines.append(f"VMAX{PS} r{j}, Z4, r{j}")
                lines.append(f"VADD{PS} Z4, r{j}, r{j}")
            lines.append(f"VMOVUP{PS[1]} r{j}, {k}{off}")
        lines.append("ADDQ R8, DX")
        p(f"#define {name}({args}) \\")
        p(" \\\n".join("\t" + l for l in lines))
        p("")
    for w in (4, 3, 2, 1):
        for acc in (0, 1):
            row(f"{D.upper()}{'ADD' if acc else 'PUT'}ROW{w}", w, acc)
    # The epilogue's rows, float32 only (MatMulEpilogue): a bias, then
    # perhaps a ReLU.
    for w in (4, 3, 2, 1):
        for acc in (0, 1):
            for relu in (0, 1):
                if f32:
                    row(epirow(w, acc, relu), w, acc, bias=True, relu=relu)
    for w in (4, 3, 2, 1):
        fn = f"{pre}KernelZ6x{L*w}"
        p(f"// func {fn}(k int, a *{T}, ars, acs int, b *{T}, bs, bstep int, c *{T}, ldc, accum, mr int, mask {mtype}, bias *{T}, relu int)")
        p(f"TEXT ·{fn}(SB), NOSPLIT, $0-112")
        sh = 2 if f32 else 3
        p(f"""\tMOVQ k+0(FP), CX
\tMOVQ a+8(FP), SI
\tMOVQ ars+16(FP), R13
\tMOVQ acs+24(FP), R9
\tMOVQ b+32(FP), DI
\tMOVQ bs+40(FP), R10
\tMOVQ bstep+48(FP), R12
\tMOVQ c+56(FP), DX
\tMOVQ ldc+64(FP), R8
\t{KMOV} mask+88(FP), K1
\tSHLQ ${sh}, R13
\tSHLQ ${sh}, R9
\tSHLQ ${sh}, R10
\tSHLQ ${sh}, R12
\tLEAQ (R10)(R10*2), R11
\tSHLQ ${sh}, R8

\t// Touch the block's rows of C, so their lines are on the way while
\t// the products run.
\tMOVQ DX, AX""")
        for i in range(6):
            for l in range(w):
                p(f"\tPREFETCHT0 {64*l}(AX)")
            if i < 5:
                p("\tADDQ R8, AX")
        p("")
        p("\tLEAQ (R13)(R13*2), AX")
        p("\tADDQ SI, AX // rows 3 to 5 of A")
        for r in range(8, 32):
            p(f"\tVPXORD Z{r}, Z{r}, Z{r}")
        a1, b1 = 6 * E, 64
        p(f"""
\tMOVQ CX, BX
\tSHRQ $2, BX
\tJZ   tail

loop4:
\t{D.upper()}STEP{w}
\t{D.upper()}STEP{w}
\t{D.upper()}STEP{w}
\t{D.upper()}STEP{w}
\tDECQ BX
\tJNZ  loop4

tail:
\tANDQ $3, CX
\tJZ   store

loop1:
\t{D.upper()}STEP{w}
\tDECQ CX
\tJNZ  loop1

store:
\tMOVQ  mr+80(FP), R12""" + ("""
\tMOVQ  bias+96(FP), R10
\tTESTQ R10, R10
\tJNZ   epi""" if f32 else "") + """
\tMOVQ  accum+72(FP), R9
\tTESTQ R9, R9
\tJNZ   add
""")
        def six_rows(name):
            # The row macro name on each row of the tile, up to mr.
            for i in range(6):
                regs = ", ".join(f"Z{8+4*i+j}" for j in range(w))
                p(f"\t{name}({regs})")
                if i < 5:
                    p(f"\tCMPQ R12, ${i+1}")
                    p("\tJLE  done")
            p("\tJMP  done")
        for acc in (0, 1):
            if acc:
                p("add:")
            six_rows(f"{D.upper()}{'ADD' if acc else 'PUT'}ROW{w}")
            p("")
        if f32:
            # The epilogue: the bias panels into Z0-Z3 (the last one
            # masked), +0 into Z4, then the rows through the EPIROW
            # variant of accum and relu.
            p("epi:")
            for j in range(w):
                off = f"{64*j}(R10)" if j else "(R10)"
                if j < w - 1:
                    p(f"\tVMOVUP{PS[1]} {off}, Z{j}")
                else:
                    p(f"\tVMOVUP{PS[1]}.Z {off}, K1, Z{j}")
            p("\tVPXORD Z4, Z4, Z4")
            p("\tMOVQ  accum+72(FP), R9")
            p("\tSHLQ  $1, R9")
            p("\tORQ   relu+104(FP), R9 // 2·accum + relu")
            for v in (1, 2, 3):
                p(f"\tCMPQ  R9, ${v}")
                p(f"\tJEQ   epi{v}")
            for v in range(4):
                if v:
                    p(f"epi{v}:")
                six_rows(epirow(w, v >> 1, v & 1))
            p("")
        p("done:\n\tVZEROUPPER\n\tRET\n")

out = ["""// Code generated by tools/asmgen/gemm_avx512.py; DO NOT EDIT.

//go:build amd64

#include "textflag.h"

// The GEMM micro-kernels for AVX-512 (F, with 32 vector registers): one
// 6×(L·w) block of C, w = 4, 3, 2, 1, with L = 16 lanes for float32
// (sgemmKernelZ6x64, …x48, …x32, …x16) and L = 8 for float64
// (dgemmKernelZ6x32, …x24, …x16, …x8).
//
// a is six rows of A: element (i, p) at a + i·ars + p·acs, a packed A
// panel (ars 1, acs 6) or rows of A in place (ars its row stride, acs 1).
// b is the first of w B panels of L columns (one register) each, bs
// values apart, row p of each bstep values after row p-1: packed panels
// (bstep L), or, with bs L, rows of B in place. The block is held in
// Z8–Z31 (row i, panel j in Z(8+4i+j)); each k step loads the w B rows
// into Z0–Z3 and broadcasts each A value in turn into Z4 or Z5, for 6·w
// FMAs. Then the first mr rows are stored to c (row stride ldc values),
// or added to what c holds when accum is not 0; in the last panel only
// the columns set in mask (K1) are: masked loads and stores, so columns
// past the edge of C are neither read nor written. With a bias (float32
// only, else ignored; not nil: w panels of L values, the last read under
// the mask), each row gets the bias added after C, and then, when relu
// is not 0, max(x, 0) and +0 as reluZ computes them, before it is
// stored: the bias and the ReLU as Add and ReLU round them, at no pass
// over C.
"""]
gen(out, "s")
gen(out, "d")
open(sys.argv[1], "w").write("\n".join(out))
