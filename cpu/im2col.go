package cpu

// A Window is the geometry of Im2Col and Col2Im over NCHW tensors: C
// channels of an input of extent (H, W) with Padding added on both
// sides, a kernel of KH×KW elements spaced (DH, DW) apart, moved by
// (SH, SW), taking (OH, OW) positions. Every field but the padding is at
// least 1 (C, H, W and the positions may be 0 for empty tensors).
type Window struct {
	C, H, W        int
	OH, OW         int
	KH, KW         int
	SH, SW, DH, DW int
	PH, PW         int
}

// windowSpan returns the positions o in [0, n) of a window whose kernel
// element sits at o·s - p + k·d, that land inside [0, extent): the
// range [lo, hi).
func windowSpan(n, extent, s, p, kd int) (lo, hi int) {
	first := p - kd // o·s ≥ first
	if first > 0 {
		lo = (first + s - 1) / s
	}
	end := extent + p - kd // o·s < end
	if end <= 0 {
		return min(lo, n), min(lo, n)
	}
	hi = min((end+s-1)/s, n)
	return min(lo, hi), hi
}

// Im2Col writes the columns of x (N, C, H, W; any strides, layout xl)
// into the contiguous dst (N, C·KH·KW, OH·OW), as im2col:
//
//	dst[n, (c·KH + i)·KW + j, oh·OW + ow] = x[n, c, oh·SH - PH + i·DH, ow·SW - PW + j·DW]
//
// and pad where that position falls outside x. Rows run in parallel.
func Im2Col[T Float](dst, x []T, xl Layout, g Window, pad T) {
	n, l := xl.Shape[0], g.OH*g.OW
	rows := n * g.C * g.KH * g.KW
	if rows == 0 || l == 0 {
		return
	}
	st := xl.Strides
	parallelFor(numWorkers(rows*l), rows, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			j, i := r%g.KW, r/g.KW%g.KH
			c, b := r/(g.KW*g.KH)%g.C, r/(g.KW*g.KH*g.C)
			base := xl.Offset + b*st[0] + c*st[1] + (j*g.DW-g.PW)*st[3]
			row := dst[r*l : (r+1)*l]
			wlo, whi := windowSpan(g.OW, g.W, g.SW, g.PW, j*g.DW)
			hlo, hhi := windowSpan(g.OH, g.H, g.SH, g.PH, i*g.DH)
			if hlo >= hhi || wlo >= whi { // no column of this row falls inside x: at+wlo may be negative
				fillVec(row, pad)
				continue
			}
			// Padding above, then each row's run of x followed by the
			// padding to the next row's run (or to the end).
			fillVec(row[:hlo*g.OW+wlo], pad)
			step := g.SW * st[3]
			if step == 1 && g.OW == g.SH*st[2] {
				// The output rows follow each other in x as in the row
				// (a stride 1 "same" convolution): one copy from the first
				// element inside x to the last, whose elements in the
				// padding the fills below overwrite.
				o, at := hlo*g.OW+wlo, base+(hlo*g.SH-g.PH+i*g.DH)*st[2]+wlo
				n := (hhi-hlo-1)*g.OW + whi - wlo
				copy(row[o:o+n], x[at:at+n])
			}
			for oh := hlo; oh < hhi; oh++ {
				o := oh * g.OW
				if step != 1 || g.OW != g.SH*st[2] {
					at := base + (oh*g.SH-g.PH+i*g.DH)*st[2] + wlo*step
					copyRun(row[o+wlo:o+whi], x[at:], step)
				}
				fillVec(row[o+whi:min(o+g.OW+wlo, l)], pad)
			}
			fillVec(row[hhi*g.OW:], pad)
		}
	})
}

// Col2Im sums the columns cols (N, C·KH·KW, OH·OW; any strides, layout
// cl) into the contiguous dst (N, C, H, W), as col2im, Unfold's adjoint:
// each element of dst is the sum, over kernel elements (i, j) in
// row-major order, of the one column entry that Im2Col would copy from
// it (none for most (i, j) when the stride exceeds the dilation).
// Columns landing in the padding are dropped. Channel planes run in
// parallel.
func Col2Im[T Float](dst, cols []T, cl Layout, g Window) {
	n, plane := cl.Shape[0], g.H*g.W
	planes := n * g.C
	if planes == 0 || plane == 0 {
		return
	}
	st := cl.Strides
	parallelFor(numWorkers(planes*g.KH*g.KW*g.OH*g.OW), planes, func(_, lo, hi int) {
		for p := lo; p < hi; p++ {
			b, c := p/g.C, p%g.C
			out := dst[p*plane : (p+1)*plane]
			clear(out)
			for i := range g.KH {
				hlo, hhi := windowSpan(g.OH, g.H, g.SH, g.PH, i*g.DH)
				for j := range g.KW {
					wlo, whi := windowSpan(g.OW, g.W, g.SW, g.PW, j*g.DW)
					if wlo >= whi || hlo >= hhi {
						continue
					}
					at := (hlo*g.SH-g.PH+i*g.DH)*g.W - g.PW + j*g.DW + wlo*g.SW
					from := cl.Offset + b*st[0] + ((c*g.KH+i)*g.KW+j)*st[1] + hlo*g.OW*st[2] + wlo*st[2]
					addBlock(out[at:], g.SH*g.W, g.SW, cols[from:], g.OW*st[2], st[2], hhi-hlo, whi-wlo)
				}
			}
		}
	})
}

// copyRun sets dst[i] = src[i·step] for every i.
func copyRun[T Float](dst, src []T, step int) {
	if len(dst) == 0 {
		return
	}
	if step == 1 {
		copy(dst, src[:len(dst)])
		return
	}
	src = src[:(len(dst)-1)*step+1]
	for i := range dst {
		dst[i] = src[i*step]
	}
}

// addBlock adds the rows×n block of src, whose rows are srs values apart
// and elements ss apart, to the block of dst with rows drs apart and
// elements ds apart; rows, n > 0. Contiguous float32 rows go to AddVec's
// AVX-512 loop (addZ) where the CPU has it, the sums the same bit for
// bit.
func addBlock[T Float](dst []T, drs, ds int, src []T, srs, ss, rows, n int) {
	if ds == 1 && ss == 1 {
		dst, src = dst[:(rows-1)*drs+n], src[:(rows-1)*srs+n] // addZ reads and writes through pointers
		if zRun[T](n) {
			for r := range rows {
				d := p32(dst[r*drs:])
				addZ(d, d, p32(src[r*srs:]), n)
			}
			return
		}
		for r := range rows {
			d, s := dst[r*drs:r*drs+n], src[r*srs:r*srs+n]
			for q := range d {
				d[q] += s[q]
			}
		}
		return
	}
	for r := range rows {
		d, s := dst[r*drs:r*drs+(n-1)*ds+1], src[r*srs:r*srs+(n-1)*ss+1]
		for q := range n {
			d[q*ds] += s[q*ss]
		}
	}
}

// fillVec sets every element of d to v.
func fillVec[T Elem](d []T, v T) {
	for i := range d {
		d[i] = v
	}
}
