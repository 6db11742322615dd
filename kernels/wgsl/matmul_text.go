package wgsl

import "fmt"

// The tiled matmul template's text, computed here so that the template
// only substitutes: the sizes it states, the accumulators, the outputs,
// the per-k reads of the workgroup tiles and the FMAs, and each operand's
// tile load with its addresses (mmLoad).

// LoadsPerK and FMAsPerK are an invocation's vec4 reads of the tiles and
// vec4 FMAs per k.
func (c mmTile) LoadsPerK() int { return c.VM() + c.VN() }
func (c mmTile) FMAsPerK() int  { return c.RM * c.VN() }

// TileVecsA and TileVecsB are the vec4s of the a and b tiles in
// workgroup memory.
func (c mmTile) TileVecsA() int { return c.KS * c.VecM() }
func (c mmTile) TileVecsB() int { return c.KS * c.VecN() }

// lane is the WGSL component c (0-3) of a vec4.
func lane(c int) string { return string("xyzw"[c%4]) }

// acc names accumulator (i, j): row i of the invocation's block, columns
// 4j..4j+3.
func acc(i, j int) string { return fmt.Sprintf("acc%d_%d", i, j) }

// Accs are the accumulators' names, row by row.
func (c mmTile) Accs() []string {
	var names []string
	for i := range c.RM {
		for j := range c.VN() {
			names = append(names, acc(i, j))
		}
	}
	return names
}

// An mmOut is one of an invocation's outputs: at row ty·4 + Row and
// column tx·4 + Col of the tile, held in the accumulator element Acc.
type mmOut struct {
	Row, Col int
	Acc      string
}

// Outs are the invocation's RM×RN outputs, in the order the kernel loads
// and stores them.
func (c mmTile) Outs() []mmOut {
	var outs []mmOut
	for i := range c.RM {
		for j := range c.VN() {
			for k := range 4 {
				outs = append(outs, mmOut{Row: i/4*64 + i%4, Col: j*64 + k, Acc: fmt.Sprintf("%s[%d]", acc(i, j), k)})
			}
		}
	}
	return outs
}

// An mmRead reads a register from a workgroup tile: let Var =
// t?[At + ty (a) or tx (b)].
type mmRead struct {
	Var string
	At  int
}

// An mmKStep is one k of a K step: the reads of the a and b tiles.
type mmKStep struct{ A, B []mmRead }

// KSteps are the KS steps' reads: a's VM vec4s 16 apart (rows ty·4 + 64·v
// of the tile), b's VN (columns tx·4 + 64·v).
func (c mmTile) KSteps() []mmKStep {
	steps := make([]mmKStep, c.KS)
	for k := range steps {
		for v := range c.VM() {
			steps[k].A = append(steps[k].A, mmRead{Var: fmt.Sprintf("a%d", v), At: k*c.VecM() + v*16})
		}
		for v := range c.VN() {
			steps[k].B = append(steps[k].B, mmRead{Var: fmt.Sprintf("b%d", v), At: k*c.VecN() + v*16})
		}
	}
	return steps
}

// An mmFMA is Acc += A * B: a vec4 of b scaled by a lane of a.
type mmFMA struct{ Acc, A, B string }

// FMAs are, per row i of the block, the FMAs every k makes: acc{i}_{j} +=
// a{i/4}.{lane i} * b{j}.
func (c mmTile) FMAs() [][]mmFMA {
	rows := make([][]mmFMA, c.RM)
	for i := range rows {
		for j := range c.VN() {
			rows[i] = append(rows[i], mmFMA{Acc: acc(i, j), A: fmt.Sprintf("a%d.%s", i/4, lane(i)), B: fmt.Sprintf("b%d", j)})
		}
	}
	return rows
}

// LoadA and LoadB are the operands' tile loads.
func (d mmData) LoadA() mmLoad {
	return mmLoad{Op: "a", X: "m", Ext: "M", Size: d.TM, KS: d.KS, KInner: d.AKInner, Fits: d.Fits, Vec4: d.AVec4}
}
func (d mmData) LoadB() mmLoad {
	return mmLoad{Op: "b", X: "n", Ext: "N", Size: d.TN, KS: d.KS, KInner: !d.BNInner, Fits: d.Fits, Vec4: d.BVec4}
}

// An mmLoad is one operand's tile load per K step (template matmul_load):
// operand Op ("a" or "b") along X ("m" or "n", extent Ext), a tile of
// Size along X by KS along k stored in workgroup memory t{Op}[kk][x] as
// vec4 rows of Size/4. Each invocation takes elements (vec4s with Vec4)
// at e = t, t + 256, ...: x and kk come from e, kk varying fastest when k
// is the operand's inner dimension (KInner), so that neighbouring
// invocations read neighbouring elements. Out-of-range elements (past Ext
// or K) load as 0 unless Fits. With Vec4 the operand is bound as
// b_{Op}4: array<vec4<f32>> and an invocation reads whole vec4s of four
// elements along its inner dimension (see vec4Along), so a vec4 lies
// wholly inside or outside the operand and the guard is per vec4; one
// along x is stored whole, one along k as four lanes of consecutive kk
// rows.
type mmLoad struct {
	Op, X, Ext         string
	Size, KS           int
	KInner, Fits, Vec4 bool
}

// Local and Global name the WGSL variables of x within the tile and in
// the operand (mm and gm for a); Origin is the tile's first x (m0).
func (l mmLoad) Local() string  { return l.X + l.X }
func (l mmLoad) Global() string { return "g" + l.X }
func (l mmLoad) Origin() string { return l.X + "0" }

// Elems is what the tile load reads: elements, or vec4s with Vec4.
func (l mmLoad) Elems() int {
	if l.Vec4 {
		return l.Size * l.KS / 4
	}
	return l.Size * l.KS
}

// An mmStep is one round of the load, elements e = t + Base; Guarded
// when the round runs past Elems (the invocation then checks e).
type mmStep struct {
	Base    int
	Guarded bool
}

// Steps are the rounds of 256 invocations that cover Elems.
func (l mmLoad) Steps() []mmStep {
	var steps []mmStep
	for b := 0; b < l.Elems(); b += mmThreads {
		steps = append(steps, mmStep{Base: b, Guarded: b+mmThreads > l.Elems()})
	}
	return steps
}

// XIndex and KIndex are x and kk of element e: with KInner kk varies
// fastest. A vec4 covers 4 consecutive x or kk.
func (l mmLoad) XIndex() string {
	if l.KInner {
		return fmt.Sprintf("e / %du", l.KS/l.width())
	}
	return fmt.Sprintf("e %% %du%s", l.Size/l.width(), l.times4())
}
func (l mmLoad) KIndex() string {
	if l.KInner {
		return fmt.Sprintf("e %% %du%s", l.KS/l.width(), l.times4())
	}
	return fmt.Sprintf("e / %du", l.Size/l.width())
}

// width is the elements one read takes: 4 with Vec4, else 1.
func (l mmLoad) width() int {
	if l.Vec4 {
		return 4
	}
	return 1
}

// times4 scales a vec4 index to elements.
func (l mmLoad) times4() string {
	if l.Vec4 {
		return " * 4u"
	}
	return ""
}

// Binding is the operand's storage array: b_a, or b_a4 with Vec4.
func (l mmLoad) Binding() string {
	if l.Vec4 {
		return "b_" + l.Op + "4"
	}
	return "b_" + l.Op
}

// Addr is the index into Binding of the element (gx, gk) through the
// operand's base ({Op}b) and strides (s{Op}{X}, s{Op}k); with Vec4, the
// index of its vec4, whose inner dimension has stride 1.
func (l mmLoad) Addr() string {
	base, gx := l.Op+"b", l.Global()
	switch {
	case !l.Vec4:
		return fmt.Sprintf("%s + %s * s%s%s + gk * s%sk", base, gx, l.Op, l.X, l.Op)
	case l.KInner:
		return fmt.Sprintf("(%s + %s * s%s%s + gk) / 4u", base, gx, l.Op, l.X)
	}
	return fmt.Sprintf("(%s + %s + gk * s%sk) / 4u", base, gx, l.Op)
}

// Zero is the value an out-of-range read loads.
func (l mmLoad) Zero() string {
	if l.Vec4 {
		return "vec4<f32>()"
	}
	return "0.0"
}

// An mmStore writes Src into the workgroup tile at Dst.
type mmStore struct{ Dst, Src string }

// Stores put the value read (v; the read itself when Fits and scalar,
// which then declares no v) into the tile: a vec4 along x whole, one
// along k as four lanes of consecutive kk rows, a scalar as one lane.
func (l mmLoad) Stores() []mmStore {
	tile, x, rowVecs := "t"+l.Op, l.Local(), l.Size/4
	switch {
	case l.Vec4 && l.KInner:
		var st []mmStore
		for c := range 4 {
			st = append(st, mmStore{fmt.Sprintf("%s[(kk + %du) * %du + %s / 4u][%s %% 4u]", tile, c, rowVecs, x, x), "v." + lane(c)})
		}
		return st
	case l.Vec4:
		return []mmStore{{fmt.Sprintf("%s[kk * %du + %s / 4u]", tile, rowVecs, x), "v"}}
	}
	src := "v"
	if l.Fits {
		src = l.Binding() + "[" + l.Addr() + "]"
	}
	return []mmStore{{fmt.Sprintf("%s[kk * %du + %s / 4u][%s %% 4u]", tile, rowVecs, x, x), src}}
}
