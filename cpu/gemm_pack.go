//go:build amd64

package cpu

import "unsafe"

// Packing for the float32 GEMM (see sgemm): blocks of A and B are copied
// into the order in which the micro-kernel reads them, from any strides,
// with zeros past the edges of the matrices so that every micro-panel is
// full. Full panels of row- or column-major operands go through the
// assembly in gemm_pack_amd64.s: transposes (packA6, packB16T) when the
// panel's groups are across the contiguous dim, copies (packA6T, packB16)
// when along it, the copies going eight k steps at a time across all the
// panels so that they read memory in order. Other strides, and the last
// partial panel, are copied element by element.

// A mat is a strided matrix: element (i, j) is data[off + i*rs + j*cs].
type mat[T Float] struct {
	data        []T
	off, rs, cs int
}

// An f32Mat is a float32 mat.
type f32Mat = mat[float32]

// t returns the transposed view.
func (v mat[T]) t() mat[T] { return mat[T]{data: v.data, off: v.off, rs: v.cs, cs: v.rs} }

// at returns the view whose (0, 0) is element (i, j).
func (v mat[T]) at(i, j int) mat[T] {
	v.off += i*v.rs + j*v.cs
	return v
}

// aPanels are the rows of A that a macro-kernel reads, in panels of
// gemmMR rows: panel q at data[off + q·step], its element (i, p) i·rs +
// p·cs further. Packed A (packedA) has step gemmMR·kc, rs 1 and cs gemmMR;
// A read in place (inPlaceA) the strides of the matrix, and edge, room
// for a last panel of fewer than gemmMR rows packed (gemmMR·kc values;
// without it the macro-kernel allocates it).
type aPanels[T Float] struct {
	data              []T
	off, step, rs, cs int
	packed            bool
	edge              []T
}

// packedA is the block of A that packA wrote to ap, kc steps of K.
func packedA[T Float](ap []T, kc int) aPanels[T] {
	return aPanels[T]{data: ap, step: gemmMR * kc, rs: 1, cs: gemmMR, packed: true}
}

// inPlaceA is the block of a read where it lies, with edge as the room
// for its last panel packed.
func inPlaceA[T Float](a mat[T], edge []T) aPanels[T] {
	return aPanels[T]{data: a.data, off: a.off, step: gemmMR * a.rs, rs: a.rs, cs: a.cs, edge: edge}
}

// inPlace reports whether the panels are A's own rows, not a packed copy.
func (a aPanels[T]) inPlace() bool { return !a.packed }

// check panics unless the panels of an mc×kc block that the kernels read
// whole are in range: every packed panel; for A in place, which gemm has
// checked, nothing (a last panel of fewer than gemmMR rows is packed).
func (a aPanels[T]) check(mc, kc int) {
	if a.packed {
		_ = a.data[a.off+(mc+gemmMR-1)/gemmMR*a.step-1]
	}
}

// bPanels are the columns of B that a macro-kernel reads, in panels of
// one register's width (lanes columns): panel q at data[off + q·step],
// its row p p·rs further. Packed B (packedB) has step lanes·kc and rs
// lanes; B read in place (inPlaceB), step lanes and rs the matrix's row
// stride.
type bPanels[T Float] struct {
	data          []T
	off, step, rs int
	packed        bool
}

// packedB is the block of B that packB wrote to bp, kc steps of K in
// panels of lanes columns.
func packedB[T Float](bp []T, lanes, kc int) bPanels[T] {
	return bPanels[T]{data: bp, step: lanes * kc, rs: lanes, packed: true}
}

// inPlaceB is the block of the row-major b read where it lies.
func inPlaceB[T Float](b mat[T], lanes int) bPanels[T] {
	return bPanels[T]{data: b.data, off: b.off, step: lanes, rs: b.rs}
}

// packA6 packs six rows of A, each kc contiguous floats rs apart from
// src, into dst as kc groups of six.
//
//go:noescape
func packA6(dst, src *float32, rs, kc int)

// packB16T packs sixteen columns of B, each kc contiguous floats cs
// apart from src, into dst as kc groups of sixteen.
//
//go:noescape
func packB16T(dst, src *float32, cs, kc int)

// packA6T packs np panels of six rows of A from kc columns of 6·np
// contiguous floats, cs apart from src, into dst: panel q, at dst+6·kc·q,
// as kc groups of six.
//
//go:noescape
func packA6T(dst, src *float32, cs, kc, np int)

// packB16 packs np panels of sixteen columns of B from kc rows of 16·np
// contiguous floats, rs apart from src, into dst: panel q, at
// dst+16·kc·q, as kc groups of sixteen.
//
//go:noescape
func packB16(dst, src *float32, rs, kc, np int)

// packA copies the mc×kc block of a into dst as ⌈mc/gemmMR⌉ panels, one
// after the other: panel p holds rows p·MR to p·MR+MR-1, column by column
// (kc groups of MR values), rows past mc being zero. dst must hold
// ⌈mc/MR⌉·MR·kc values.
func packA(dst []float32, a f32Mat, mc, kc int) {
	const mr = gemmMR
	full := mc / mr * mr
	switch {
	case a.cs == 1: // row-major: transpose six rows at a time
		if full > 0 {
			a.check(full, kc) // the assembly reads through pointers
		}
		for i0 := 0; i0 < full; i0 += mr {
			packA6(&dst[i0*kc : (i0+mr)*kc][0], &a.data[a.off+i0*a.rs], a.rs, kc)
		}
	case a.rs == 1: // column-major: MR contiguous values a column
		if full > 0 {
			a.check(full, kc)
			packA6T(&dst[:full*kc][0], &a.data[a.off], a.cs, kc, full/mr)
		}
	default:
		full = 0
	}
	packAFrom(dst, a, full, mc, kc)
}

// packAGo is packA in Go, for any element type.
func packAGo[T Float](dst []T, a mat[T], mc, kc int) { packAFrom(dst, a, 0, mc, kc) }

// packAFrom packs the panels of rows i0 to mc-1 of packA's block, i0 a
// multiple of gemmMR, element by element (a row-major a row by row).
func packAFrom[T Float](dst []T, a mat[T], i0, mc, kc int) {
	const mr = gemmMR
	for ; i0 < mc; i0 += mr {
		d := dst[i0*kc : (i0+mr)*kc]
		rows := min(mr, mc-i0)
		if a.cs == 1 {
			for i := range rows {
				row := a.data[a.off+(i0+i)*a.rs:][:kc]
				for p, v := range row {
					d[p*mr+i] = v
				}
			}
			for p := range kc {
				clear(d[p*mr+rows : p*mr+mr])
			}
			continue
		}
		for p := range kc {
			g := d[p*mr : p*mr+mr]
			o := a.off + i0*a.rs + p*a.cs
			for i := range rows {
				g[i] = a.data[o+i*a.rs]
			}
			clear(g[rows:])
		}
	}
}

// packB copies the kc×nc block of b into dst as ⌈nc/gemmNR⌉ panels: panel
// p holds columns p·NR to p·NR+NR-1, row by row (kc groups of NR values),
// columns past nc being zero. dst must hold ⌈nc/NR⌉·NR·kc values.
func packB(dst []float32, b f32Mat, kc, nc int) {
	const nr = gemmNR
	full := nc / nr * nr
	switch {
	case b.cs == 1: // row-major: NR contiguous values a row
		if full > 0 {
			b.check(kc, full)
			packB16(&dst[:full*kc][0], &b.data[b.off], b.rs, kc, full/nr)
		}
	case b.rs == 1: // column-major: transpose sixteen columns at a time
		if full > 0 {
			b.check(kc, full) // the assembly reads through pointers
		}
		for j0 := 0; j0 < full; j0 += nr {
			packB16T(&dst[j0*kc : (j0+nr)*kc][0], &b.data[b.off+j0*b.cs], b.cs, kc)
		}
	default:
		full = 0
	}
	packBFrom(dst, b, full, kc, nc)
}

// packBGo is packB in Go for any element type, with panels of one
// 512-bit register's width: 64 bytes of columns (8 for float64).
func packBGo[T Float](dst []T, b mat[T], kc, nc int) { packBFrom(dst, b, 0, kc, nc) }

// packBFrom packs the panels of columns j0 to nc-1 of a packB block,
// j0 a multiple of the panel width (gemmNR for float32, 64 bytes of
// columns otherwise), element by element (a row-major b row by row).
func packBFrom[T Float](dst []T, b mat[T], j0, kc, nc int) {
	nr := gemmNR
	if unsafe.Sizeof(T(0)) == 8 {
		nr = dgemmNR
	}
	for ; j0 < nc; j0 += nr {
		d := dst[j0*kc : (j0+nr)*kc]
		cols := min(nr, nc-j0)
		for p := range kc {
			g := d[p*nr : p*nr+nr]
			o := b.off + p*b.rs + j0*b.cs
			if b.cs == 1 {
				copy(g, b.data[o:o+cols])
			} else {
				for j := range cols {
					g[j] = b.data[o+j*b.cs]
				}
			}
			clear(g[cols:])
		}
	}
}
