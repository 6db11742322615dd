package cpu

import "math"

// Attention is the geometry of a variable-length (segmented) scaled
// dot-product attention over packed rows: q, k, v, out and the
// gradients are contiguous (N, H, D) arrays, and Seg holds the segment
// [Seg[2i], Seg[2i+1]) of each row i. Row i of a segment [a, b) attends
// to keys a..b-1, or a..i when Causal, with weights
// softmax(Scale·q[i]·k[j]) per head.
type Attention struct {
	N, H, D int
	Seg     []int32
	Scale   float64
	Causal  bool
}

// attentionBlock is the side of the tiles the kernels work on
// (FlashAttention's blocks): a block of queries meets a block of keys in
// an attentionBlock² tile of scores, a product of MatMul, and only the
// tile is ever held, never a segment's L×L scores.
const attentionBlock = 64

// An attnTask is one block of rows [r0, r1) of head h in the segment
// [s, e).
type attnTask struct{ s, e, r0, r1, h int }

// tasks returns the blocks of rows of every segment and head.
func (a Attention) tasks() []attnTask {
	var out []attnTask
	for s := 0; s < a.N; {
		e := int(a.Seg[2*s+1])
		for h := range a.H {
			for r := s; r < e; r += attentionBlock {
				out = append(out, attnTask{s, e, r, min(r+attentionBlock, e), h})
			}
		}
		s = e
	}
	return out
}

// rows returns the layout (1, n, D) of rows r0.. of head h; cols its
// transpose (1, D, n).
func (a Attention) rows(r0, n, h int) Layout {
	hd := a.H * a.D
	return Layout{Shape: []int{1, n, a.D}, Strides: []int{n * hd, hd, 1}, Offset: r0*hd + h*a.D}
}

func (a Attention) cols(r0, n, h int) Layout {
	hd := a.H * a.D
	return Layout{Shape: []int{1, a.D, n}, Strides: []int{n * hd, 1, hd}, Offset: r0*hd + h*a.D}
}

// tile is the layout of a contiguous (1, m, n) tile, and tileT its
// transpose.
func tile(m, n int) Layout  { return Layout{Shape: []int{1, m, n}, Strides: []int{m * n, n, 1}} }
func tileT(m, n int) Layout { return Layout{Shape: []int{1, n, m}, Strides: []int{m * n, 1, n}} }

// keyEnd returns the end of the keys the block of queries t sees, and
// queryStart the first query that sees the block of keys t.
func (a Attention) keyEnd(t attnTask) int {
	if a.Causal {
		return t.r1
	}
	return t.e
}

func (a Attention) queryStart(t attnTask) int {
	if a.Causal {
		return t.r0
	}
	return t.s
}

// accumulate adds x to acc.
func accumulate[T Float](acc []float64, x []T) {
	for j, v := range x {
		acc[j] += float64(v)
	}
}

// visible returns how many of the keys k0.. row i sees in a block of bk.
func (a Attention) visible(i, k0, bk int) int {
	if a.Causal {
		return max(0, min(bk, i-k0+1))
	}
	return bk
}

// AttentionForward writes out (N, H, D) and lse (N, H), the logsumexp of
// each row's scaled scores, without forming a segment's score matrix:
// each block of queries streams over its segment's keys a block at a
// time with an online softmax (a running max and sum per row, the
// accumulator rescaled as the max grows), the products by MatMul.
func AttentionForward[T Float](out, lse, q, k, v []T, a Attention) {
	tasks, hd, d := a.tasks(), a.H*a.D, a.D
	parallelFor(numWorkers(a.N*hd*8), len(tasks), func(_, lo, hi int) {
		const b = attentionBlock
		sc, pv, acc := make([]T, b*b), make([]T, b*d), make([]float64, b*d)
		m, l := make([]float64, b), make([]float64, b)
		for _, t := range tasks[lo:hi] {
			bq := t.r1 - t.r0
			clear(acc)
			for r := range bq {
				m[r], l[r] = math.Inf(-1), 0
			}
			kend := a.keyEnd(t)
			for k0 := t.s; k0 < kend; k0 += b {
				bk := min(b, kend-k0)
				MatMul(sc, tile(bq, bk), q, a.rows(t.r0, bq, t.h), k, a.cols(k0, bk, t.h))
				for r := range bq {
					row, n := sc[r*bk:r*bk+bk], a.visible(t.r0+r, k0, bk)
					if n == 0 {
						clear(row)
						continue
					}
					bm := math.Inf(-1)
					for _, x := range row[:n] {
						bm = max(bm, a.Scale*float64(x))
					}
					if bm > m[r] {
						c := math.Exp(m[r] - bm)
						l[r] *= c
						for j := range d {
							acc[r*d+j] *= c
						}
						m[r] = bm
					}
					for j, x := range row[:n] {
						p := math.Exp(a.Scale*float64(x) - m[r])
						l[r] += p
						row[j] = T(p)
					}
					clear(row[n:])
				}
				MatMul(pv, tile(bq, d), sc, tile(bq, bk), v, a.rows(k0, bk, t.h))
				accumulate(acc, pv[:bq*d])
			}
			for r := range bq {
				i := t.r0 + r
				o := out[i*hd+t.h*d : i*hd+t.h*d+d]
				for j := range o {
					o[j] = T(acc[r*d+j] / l[r])
				}
				lse[i*a.H+t.h] = T(m[r] + math.Log(l[r]))
			}
		}
	})
}

// AttentionBackward writes the gradients dq, dk and dv (N, H, D) of
// AttentionForward given its out and lse and the gradient g of out,
// recomputing the weights p = exp(Scale·q[i]·k[j] - lse[i]) tile by tile
// rather than reading stored ones (FlashAttention's backward): with
// δ[i] = g[i]·out[i] and ds = p (g[i]·v[j] - δ[i]),
//
//	dq[i] = Scale Σ_j ds k[j]     (a pass over blocks of queries)
//	dk[j] = Scale Σ_i ds q[i]     (a pass over blocks of keys)
//	dv[j] = Σ_i p g[i]
//
// Each pass writes only its own rows, so neither needs atomics.
func AttentionBackward[T Float](dq, dk, dv, q, k, v, out, lse, g []T, a Attention) {
	tasks, hd, d := a.tasks(), a.H*a.D, a.D
	delta := make([]float64, a.N*a.H)
	for r := range delta {
		o := r * d
		for j := range d {
			delta[r] += float64(g[o+j]) * float64(out[o+j])
		}
	}
	work := numWorkers(a.N * hd * 8)
	// ds fills sc (from the scores) with Scale·ds, and dp (from g·vᵀ)
	// with p when keepP, for the bq×bk tile of queries q0.. and keys k0...
	ds := func(sc, dp []T, q0, bq, k0, bk, h int, keepP bool) {
		for r := range bq {
			i := q0 + r
			n, ls, dl := a.visible(i, k0, bk), float64(lse[i*a.H+h]), delta[i*a.H+h]
			s, pr := sc[r*bk:r*bk+bk], dp[r*bk:r*bk+bk]
			for j := range n {
				p := math.Exp(a.Scale*float64(s[j]) - ls)
				s[j] = T(a.Scale * p * (float64(pr[j]) - dl))
				if keepP {
					pr[j] = T(p)
				}
			}
			clear(s[n:])
			clear(pr[n:])
		}
	}
	parallelFor(work, len(tasks), func(_, lo, hi int) {
		const b = attentionBlock
		sc, dp, tmp, acc := make([]T, b*b), make([]T, b*b), make([]T, b*d), make([]float64, b*d)
		for _, t := range tasks[lo:hi] {
			bq := t.r1 - t.r0
			clear(acc)
			kend := a.keyEnd(t)
			for k0 := t.s; k0 < kend; k0 += b {
				bk := min(b, kend-k0)
				MatMul(sc, tile(bq, bk), q, a.rows(t.r0, bq, t.h), k, a.cols(k0, bk, t.h))
				MatMul(dp, tile(bq, bk), g, a.rows(t.r0, bq, t.h), v, a.cols(k0, bk, t.h))
				ds(sc, dp, t.r0, bq, k0, bk, t.h, false)
				MatMul(tmp, tile(bq, d), sc, tile(bq, bk), k, a.rows(k0, bk, t.h))
				accumulate(acc, tmp[:bq*d])
			}
			store(dq, acc, t, hd, d)
		}
	})
	parallelFor(work, len(tasks), func(_, lo, hi int) {
		const b = attentionBlock
		sc, dp, tmp := make([]T, b*b), make([]T, b*b), make([]T, b*d)
		ak, av := make([]float64, b*d), make([]float64, b*d)
		for _, t := range tasks[lo:hi] { // t is a block of keys here
			bk := t.r1 - t.r0
			clear(ak)
			clear(av)
			for q0 := a.queryStart(t); q0 < t.e; q0 += b {
				bq := min(b, t.e-q0)
				MatMul(sc, tile(bq, bk), q, a.rows(q0, bq, t.h), k, a.cols(t.r0, bk, t.h))
				MatMul(dp, tile(bq, bk), g, a.rows(q0, bq, t.h), v, a.cols(t.r0, bk, t.h))
				ds(sc, dp, q0, bq, t.r0, bk, t.h, true)
				MatMul(tmp, tile(bk, d), dp, tileT(bq, bk), g, a.rows(q0, bq, t.h))
				accumulate(av, tmp[:bk*d])
				MatMul(tmp, tile(bk, d), sc, tileT(bq, bk), q, a.rows(q0, bq, t.h))
				accumulate(ak, tmp[:bk*d])
			}
			store(dk, ak, t, hd, d)
			store(dv, av, t, hd, d)
		}
	})
}

// store writes the accumulated block acc (rows of D) to the rows of
// task t in dst.
func store[T Float](dst []T, acc []float64, t attnTask, hd, d int) {
	for r := range t.r1 - t.r0 {
		o := (t.r0+r)*hd + t.h*d
		for j := range d {
			dst[o+j] = T(acc[r*d+j])
		}
	}
}
