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

// attentionBlock is the number of keys whose scores one step of the
// online softmax holds (FlashAttention's key tile): the running max
// rescales the accumulator once per block.
const attentionBlock = 64

// keys returns the keys [lo, hi) row i attends to.
func (a Attention) keys(i int) (lo, hi int) {
	if a.Causal {
		return int(a.Seg[2*i]), i + 1
	}
	return int(a.Seg[2*i]), int(a.Seg[2*i+1])
}

// queries returns the queries [lo, hi) that attend to key j.
func (a Attention) queries(j int) (lo, hi int) {
	if a.Causal {
		return j, int(a.Seg[2*j+1])
	}
	return int(a.Seg[2*j]), int(a.Seg[2*j+1])
}

func dot[T Float](x, y []T) float64 {
	var s float64
	for i, v := range x {
		s += float64(v) * float64(y[i])
	}
	return s
}

// AttentionForward writes out (N, H, D) and lse (N, H), the logsumexp of
// each row's scaled scores, without forming a score matrix: each (row,
// head) streams over its keys in blocks of attentionBlock with an online
// softmax (running max and sum), accumulating in float64.
func AttentionForward[T Float](out, lse, q, k, v []T, a Attention) {
	hd := a.H * a.D
	parallelFor(numWorkers(a.N*hd*8), a.N*a.H, func(_, lo, hi int) {
		acc := make([]float64, a.D)
		var sc [attentionBlock]float64
		for r := lo; r < hi; r++ {
			i, h := r/a.H, r%a.H
			qi := q[i*hd+h*a.D : i*hd+h*a.D+a.D]
			j0, j1 := a.keys(i)
			m, l := math.Inf(-1), 0.0
			clear(acc)
			for b := j0; b < j1; b += attentionBlock {
				e := min(b+attentionBlock, j1)
				bm := math.Inf(-1)
				for j := b; j < e; j++ {
					s := a.Scale * dot(qi, k[j*hd+h*a.D:j*hd+h*a.D+a.D])
					sc[j-b] = s
					bm = max(bm, s)
				}
				if bm > m {
					c := math.Exp(m - bm)
					l *= c
					for t := range acc {
						acc[t] *= c
					}
					m = bm
				}
				for j := b; j < e; j++ {
					p := math.Exp(sc[j-b] - m)
					l += p
					vj := v[j*hd+h*a.D : j*hd+h*a.D+a.D]
					for t, x := range vj {
						acc[t] += p * float64(x)
					}
				}
			}
			o := out[i*hd+h*a.D : i*hd+h*a.D+a.D]
			for t := range o {
				o[t] = T(acc[t] / l)
			}
			lse[r] = T(m + math.Log(l))
		}
	})
}

// AttentionBackward writes the gradients dq, dk and dv (N, H, D) of
// AttentionForward given its out and lse and the gradient g of out,
// recomputing the weights p = exp(Scale·q[i]·k[j] - lse[i]) rather than
// reading stored ones (FlashAttention's backward): with δ[i] = g[i]·out[i],
//
//	dq[i] = Scale Σ_j p (g[i]·v[j] - δ[i]) k[j]   (a pass over rows)
//	dk[j] = Scale Σ_i p (g[i]·v[j] - δ[i]) q[i]   (a pass over keys)
//	dv[j] = Σ_i p g[i]
//
// Each pass writes only its own rows, so neither needs atomics.
func AttentionBackward[T Float](dq, dk, dv, q, k, v, out, lse, g []T, a Attention) {
	hd, d := a.H*a.D, a.D
	delta := make([]float64, a.N*a.H)
	row := func(x []T, i, h int) []T { return x[i*hd+h*d : i*hd+h*d+d] }
	work := numWorkers(a.N * hd * 8)
	parallelFor(work, a.N*a.H, func(_, lo, hi int) {
		acc := make([]float64, d)
		for r := lo; r < hi; r++ {
			i, h := r/a.H, r%a.H
			qi, gi := row(q, i, h), row(g, i, h)
			delta[r] = dot(gi, row(out, i, h))
			clear(acc)
			j0, j1 := a.keys(i)
			for j := j0; j < j1; j++ {
				kj := row(k, j, h)
				p := math.Exp(a.Scale*dot(qi, kj) - float64(lse[r]))
				ds := p * (dot(gi, row(v, j, h)) - delta[r])
				for t, x := range kj {
					acc[t] += ds * float64(x)
				}
			}
			o := row(dq, i, h)
			for t := range o {
				o[t] = T(a.Scale * acc[t])
			}
		}
	})
	parallelFor(work, a.N*a.H, func(_, lo, hi int) {
		ak, av := make([]float64, d), make([]float64, d)
		for r := lo; r < hi; r++ {
			j, h := r/a.H, r%a.H
			kj, vj := row(k, j, h), row(v, j, h)
			clear(ak)
			clear(av)
			i0, i1 := a.queries(j)
			for i := i0; i < i1; i++ {
				qi, gi := row(q, i, h), row(g, i, h)
				p := math.Exp(a.Scale*dot(qi, kj) - float64(lse[i*a.H+h]))
				ds := p * (dot(gi, vj) - delta[i*a.H+h])
				for t := range ak {
					ak[t] += ds * float64(qi[t])
					av[t] += p * float64(gi[t])
				}
			}
			ok, ov := row(dk, j, h), row(dv, j, h)
			for t := range ok {
				ok[t] = T(a.Scale * ak[t])
				ov[t] = T(av[t])
			}
		}
	})
}
