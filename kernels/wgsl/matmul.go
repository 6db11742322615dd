package wgsl

import "fmt"

// MatMul returns the plan computing out[b] = a[b] · b[b] for every batch
// b, f32, accumulating in f32. Layouts are 3-D as in cpu.MatMul: out
// (B, M, N), a (B, M, K), b (B, K, N), with any non-negative strides: a
// transposed operand is read in place, a batch stride of 0 broadcasts.
// out must not overlap a or b. K = 0 writes zeros. Unlike the CPU kernel
// (gonum, which skips zeros of a), 0·Inf and 0·NaN give NaN, as in IEEE
// arithmetic and torch.
//
// It chooses MatMulTiled with 128×128 tiles when M and N are at least
// 128, else 64×64 tiles, and MatMulNaive when the limits hold neither
// (fewer than 256 invocations or 8 KiB of workgroup memory).
//
// The plan is one kernel, except that it runs one per range of at most
// MaxWorkgroupsPerDimension batches and, within it, one per range of K
// short enough for Limits.MaxLoopTrips (loops.go; about 1M for 64×64
// tiles), in order: each later range adds its products to what out
// holds, in the order one kernel would, so results are bitwise equal.
//
// Bindings: "out" (read_write), "a" (read), "b" (read).
func MatMul(out, a, b Layout, lim Limits) (Plan, error) {
	return MatMulFused(out, a, b, nil, lim)
}

// MatMulFused is MatMul storing epi(product) rather than the product
// when epi is not nil (see MatMulEpilogue); MatMul otherwise.
func MatMulFused(out, a, b Layout, epi *MatMulEpilogue, lim Limits) (Plan, error) {
	lim = lim.orDefault()
	if lim.MaxWorkgroupSize < 256 || lim.MaxWorkgroupStorage < 8<<10 {
		return matmulNaive(out, a, b, epi, lim)
	}
	tile := 64
	if len(out.Shape) == 3 && out.Shape[1] >= 128 && out.Shape[2] >= 128 {
		tile = 128
	}
	return matmulTiled(mmTiles[tile], out, a, b, epi, lim, true)
}

// MatMulTiled returns the tiled matmul plan with tile×tile output tiles
// (64 or 128), 256 invocations (16×16) each holding a 4×4 (tile 64) or
// 8×8 (tile 128) block of outputs in registers, K in steps of 16 (tile
// 64) or 8 (tile 128), and both operand tiles in 8 KiB of workgroup
// memory as vec4 rows (mmTiles). Loads go through the operands' strides,
// ordered so that neighbouring invocations read neighbouring elements,
// as vec4s when the dimension so walked (k or m of a, k or n of b) has
// stride 1 and a multiple of 4 elements and the offset and other strides
// are multiples of 4, else one f32 at a time; edges are guarded unless M
// and N are multiples of the tile and K of its step. The batch is
// workgroup_id.z. Arguments, bindings and the split into kernels as
// MatMul; the device needs 256 invocations per workgroup and 8 KiB of
// workgroup memory.
func MatMulTiled(tile int, out, a, b Layout, lim Limits) (Plan, error) {
	cfg, ok := mmTiles[tile]
	if !ok {
		return Plan{}, fmt.Errorf("wgsl: MatMulTiled: tile %d (want 64 or 128)", tile)
	}
	return matmulTiled(cfg, out, a, b, nil, lim, true)
}

// matmulTiled renders the tiled template for cfg (MatMulTiled's tiles,
// or others in tests), loading operands as vec4 where vec4Along allows
// and vec4 is set (tests clear it to run the scalar loads).
func matmulTiled(cfg mmTile, out, a, b Layout, epi *MatMulEpilogue, lim Limits, vec4 bool) (Plan, error) {
	lim = lim.orDefault()
	if err := cfg.check(); err != nil {
		return Plan{}, err
	}
	if lim.MaxWorkgroupSize < mmThreads || lim.MaxWorkgroupStorage < cfg.storage() {
		return Plan{}, fmt.Errorf("wgsl: MatMulTiled: needs %d invocations and %d KiB of workgroup memory, the limits are %d and %d", mmThreads, cfg.storage()>>10, lim.MaxWorkgroupSize, lim.MaxWorkgroupStorage)
	}
	ep, err := epi.data(out)
	if err != nil {
		return Plan{}, err
	}
	p, err := matmulParams(out, a, b, ep)
	if err != nil {
		return Plan{}, err
	}
	epi.setParams(p)
	m, n, k := int(p.U32("m")), int(p.U32("n")), int(p.U32("k"))
	d := mmData{
		mmEpi:   ep,
		mmTile:  cfg,
		AKInner: a.Strides[2] == 1 || k == 1,
		BNInner: b.Strides[2] == 1 || n == 1,
		Fits:    m%cfg.TM == 0 && n%cfg.TN == 0 && k%cfg.KS == 0,
	}
	if vec4 && cfg.KS%4 == 0 {
		d.AVec4 = vec4Along(a, 1+b2i(d.AKInner))
		d.BVec4 = vec4Along(b, 1+b2i(d.BNInner))
	}
	// Trips: the batch loop runs once (2), the K loop ⌈krange/KS⌉ times.
	return mmPlan(p, ep, (n+cfg.TN-1)/cfg.TN, (m+cfg.TM-1)/cfg.TM, (lim.MaxLoopTrips-3)*cfg.KS, lim, func(acc, last bool) (string, error) {
		d.Acc, d.Last = acc, last
		return render("matmul_tiled", d)
	})
}

// vec4Along reports whether the tiled kernel may read l as vec4s along
// dimension d, the one its tile load walks contiguously: d has stride 1
// and an extent that is a multiple of 4, and the offset and the other
// strides are multiples of 4 (a dimension of extent 1 never moves), so
// every vec4 of four consecutive elements along d starts on a 16-byte
// boundary of the binding and lies within the view. An empty l is read
// as f32s: its binding may be shorter than a vec4.
func vec4Along(l Layout, d int) bool {
	if l.Strides[d] != 1 || l.Shape[d]%4 != 0 || l.Offset%4 != 0 {
		return false
	}
	for e, n := range l.Shape {
		if n == 0 || e != d && n > 1 && l.Strides[e]%4 != 0 {
			return false
		}
	}
	return true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// mmThreads is the tiled kernel's workgroup: 16×16 invocations.
const mmThreads = 256

// An mmTile is a configuration of the tiled matmul template: TM×TN
// output tiles, K in steps of KS, each of the 16×16 invocations holding
// an RM×RN block of outputs in RM×(RN/4) vec4 accumulators. Invocation
// (tx, ty) owns the rows ty·4 + {0..3} + 64·i (i < RM/4) of the tile and
// the columns tx·4 + {0..3} + 64·j (j < RN/4), so TM = 16·RM and
// TN = 16·RN. The operand tiles, KS×TM of a and KS×TN of b, are stored
// k-major as vec4 rows in workgroup memory, each loaded by every
// invocation in turn (TM·KS and TN·KS must be multiples of 256).
type mmTile struct {
	TM, TN, KS int // output tile rows and columns, K step
	RM, RN     int // outputs per invocation: rows and columns
}

// mmTiles are the tiled configurations MatMulTiled offers, by tile size.
var mmTiles = map[int]mmTile{
	64:  {TM: 64, TN: 64, KS: 16, RM: 4, RN: 4},
	128: {TM: 128, TN: 128, KS: 8, RM: 8, RN: 8},
}

// VM and VN are the vec4s of a and b an invocation reads per k.
func (c mmTile) VM() int { return c.RM / 4 }
func (c mmTile) VN() int { return c.RN / 4 }

// VecM and VecN are the vec4s in one k row of the a and b tiles.
func (c mmTile) VecM() int { return c.TM / 4 }
func (c mmTile) VecN() int { return c.TN / 4 }

// storage is the workgroup memory of both tiles, in bytes.
func (c mmTile) storage() int { return 4 * c.KS * (c.TM + c.TN) }

// check reports whether the template can render c.
func (c mmTile) check() error {
	if c.RM <= 0 || c.RN <= 0 || c.RM%4 != 0 || c.RN%4 != 0 || c.TM != 16*c.RM || c.TN != 16*c.RN ||
		c.KS <= 0 || c.TM*c.KS%mmThreads != 0 || c.TN*c.KS%mmThreads != 0 {
		return fmt.Errorf("wgsl: bad matmul tile %+v", c)
	}
	return nil
}

// MatMulNaive returns the reference matmul plan: one invocation per
// output element, 16×16 (or fewer) per workgroup. Arguments, bindings and
// the split into kernels as MatMul.
func MatMulNaive(out, a, b Layout, lim Limits) (Plan, error) {
	return matmulNaive(out, a, b, nil, lim)
}

func matmulNaive(out, a, b Layout, epi *MatMulEpilogue, lim Limits) (Plan, error) {
	lim = lim.orDefault()
	ep, err := epi.data(out)
	if err != nil {
		return Plan{}, err
	}
	p, err := matmulParams(out, a, b, ep)
	if err != nil {
		return Plan{}, err
	}
	epi.setParams(p)
	m, n := int(p.U32("m")), int(p.U32("n"))
	wx := 16
	for wx*wx > lim.MaxWorkgroupSize {
		wx /= 2
	}
	d := mmData{mmEpi: ep, WX: wx, WY: wx}
	// Trips: the batch loop runs once (2), the K loop krange times.
	return mmPlan(p, ep, (n+wx-1)/wx, (m+wx-1)/wx, lim.MaxLoopTrips-3, lim, func(acc, last bool) (string, error) {
		d.Acc, d.Last = acc, last
		return render("matmul_naive", d)
	})
}

// mmData is the matmul templates' data and render-cache key (see
// srcKey): the tile (tiled) or the workgroup (naive), and whether a's k
// and b's n are inner in memory, the sizes fit the tile and a and b are
// read as vec4s (tiled; a vec4 operand's binding is declared
// array<vec4<f32>>, named b_a4 or b_b4), and the epilogue, if any
// (applied by the kernel of the last range of K).
type mmData struct {
	mmEpi
	mmTile
	AKInner, BNInner, Fits bool
	AVec4, BVec4           bool
	Acc                    bool // out holds the sum over earlier K ranges
	Last                   bool // the last range of K, which stores through the epilogue
	WX, WY                 int
}

// Struct is the params' WGSL declaration (mmFields).
func (d mmData) Struct() string { return NewParams(mmFields(d.mmEpi)...).Struct() }

// mmFields are the params of every matmul kernel: sizes, the ranges of
// batches and K, offs (out, a, b) and the strides (batch, row, col) of a,
// b and out; then the epilogue's (mmEpi.fields).
func mmFields(ep mmEpi) []ParamField {
	return append([]ParamField{{"m", "u32", 0}, {"n", "u32", 0}, {"k", "u32", 0}, {"batch", "u32", 0},
		{"bbeg", "u32", 0}, {"bend", "u32", 0}, {"kbeg", "u32", 0}, {"kend", "u32", 0},
		{"offs", "array", 1}, {"sa", "array", 1}, {"sb", "array", 1}, {"so", "array", 1}}, ep.fields()...)
}

// mmBindings are out, a and b, then the epilogue's inputs not read
// through out.
func mmBindings(ep mmEpi) []Binding {
	bs := []Binding{{Name: "out"}, {Name: "a", ReadOnly: true}, {Name: "b", ReadOnly: true}}
	for _, in := range ep.EpiInputs() {
		bs = append(bs, Binding{Name: in.Name, ReadOnly: true})
	}
	return bs
}

// mmPlan returns the kernels of a matmul over a grid of gx column tiles
// and gy row tiles: one per range of at most MaxWorkgroupsPerDimension
// batches (workgroup_id.z) and, within it, per range of at most kmax of
// K, in order, setting bbeg, bend, kbeg and kend in p. src renders the
// kernel, with acc for the ranges of K after the first and last for the
// last. An epilogue that reads out in place needs one range of K.
func mmPlan(p *Params, ep mmEpi, gx, gy, kmax int, lim Limits, src func(acc, last bool) (string, error)) (Plan, error) {
	maxD := lim.MaxWorkgroupsPerDimension
	if gx > maxD || gy > maxD {
		return Plan{}, fmt.Errorf("wgsl: MatMul: %d×%d tiles exceed %d workgroups per dimension", gy, gx, maxD)
	}
	if kmax <= 0 {
		return Plan{}, fmt.Errorf("wgsl: MatMul: a loop trip limit of %d leaves no room for K", lim.MaxLoopTrips)
	}
	batch, k := int(p.U32("batch")), int(p.U32("k"))
	var plan Plan
	if gx == 0 || gy == 0 || batch == 0 {
		return plan, nil
	}
	kspans := spans(k, kmax)
	if len(kspans) > 1 && ep.aliased() {
		return Plan{}, fmt.Errorf("wgsl: MatMul: an epilogue reading out in place needs K ≤ %d, not %d", kmax, k)
	}
	for _, bs := range spans(batch, maxD) {
		for i, ks := range kspans {
			s, err := src(i > 0, i == len(kspans)-1)
			if err != nil {
				return Plan{}, err
			}
			p.SetU32("bbeg", uint32(bs[0])).SetU32("bend", uint32(bs[1])).SetU32("kbeg", uint32(ks[0])).SetU32("kend", uint32(ks[1]))
			plan.Kernels = append(plan.Kernels, Kernel{Source: s, Entry: "main", Params: p.Bytes(),
				Groups: [3]uint32{uint32(gx), uint32(gy), uint32(bs[1] - bs[0])}, Bindings: mmBindings(ep)})
		}
	}
	return plan, nil
}

// matmulParams validates the layouts and encodes m, n, k, batch, offs
// (out, a, b) and the strides (batch, row, col) of a, b and out; mmPlan
// sets the ranges of batches and K (bbeg, bend, kbeg, kend).
func matmulParams(out, a, b Layout, ep mmEpi) (*Params, error) {
	for _, x := range []struct {
		l    Layout
		what string
	}{{out, "MatMul output"}, {a, "MatMul a"}, {b, "MatMul b"}} {
		if err := checkLayout(x.l, x.what); err != nil {
			return nil, err
		}
		if len(x.l.Shape) != 3 {
			return nil, fmt.Errorf("wgsl: %s: rank %d, want 3 (batch, rows, cols)", x.what, len(x.l.Shape))
		}
	}
	bt, m, n, k := out.Shape[0], out.Shape[1], out.Shape[2], a.Shape[2]
	if a.Shape[0] != bt || b.Shape[0] != bt || a.Shape[1] != m || b.Shape[1] != k || b.Shape[2] != n {
		return nil, fmt.Errorf("wgsl: MatMul: shapes out %v, a %v, b %v do not match (B,M,N) = (B,M,K)·(B,K,N)", out.Shape, a.Shape, b.Shape)
	}
	p := NewParams(mmFields(ep)...)
	p.SetU32("m", uint32(m)).SetU32("n", uint32(n)).SetU32("k", uint32(k)).SetU32("batch", uint32(bt))
	p.SetArray("offs", u32s([]int{out.Offset, a.Offset, b.Offset}, 4, 0))
	p.SetArray("sa", u32s(a.Strides, 4, 0)).SetArray("sb", u32s(b.Strides, 4, 0)).SetArray("so", u32s(out.Strides, 4, 0))
	return p, nil
}
