package wgsl

import (
	"fmt"
	"math"

	"github.com/tessera-ml/tessera/internal/layout"
)

// Philox returns the kernel filling out (a contiguous view of n elements)
// with the draw at (seed, offset) of the counter-based stream that
// cpu.RandomWords, cpu.Uniform and cpu.Normal define (see cpu/philox.go):
// element i comes from word i%4 of Philox4x32-10 block offset + i/4. The
// caller advances its offset by ceil(n/4) blocks per draw.
//
//   - dist "words": the raw 32-bit words, bitwise equal to
//     cpu.RandomWords (stored as u32; an i32 tensor holds the same bits).
//   - dist "uniform" (a = lo, b = hi), f32: u = (word >> 8)·2⁻²⁴, exact,
//     then lo + (hi - lo)·u in f32, a result that reaches hi replaced by
//     the largest f32 below it. On [0, 1) this is u itself, bitwise equal
//     to cpu.Uniform, and so is [0, hi) for an f32 hi (one rounding of an
//     exact product); otherwise the CPU rounds once from float64 while f32
//     arithmetic rounds twice (lavapipe's fma is not fused), and the two
//     agree within an ulp.
//   - dist "normal" (a = mean, b = std), f32: Box–Muller on word pairs as
//     cpu.Normal, computed in f32 (ln u1 through log1p of the exact
//     1 - u1), so it agrees with the CPU within float tolerance, not
//     bitwise.
//
// Bindings: "out" (read_write).
func Philox(dist string, out Layout, seed, offset uint64, a, b float64, lim Limits) (Kernel, error) {
	lim = lim.orDefault()
	if err := checkLayout(out, "Philox output"); err != nil {
		return Kernel{}, err
	}
	if !layout.IsContiguous(out.Shape, out.Strides) {
		return Kernel{}, fmt.Errorf("wgsl: Philox: output shape %v strides %v is not contiguous", out.Shape, out.Strides)
	}
	if dist != "words" && dist != "uniform" && dist != "normal" {
		return Kernel{}, fmt.Errorf("wgsl: Philox: unknown distribution %q (want words, uniform or normal)", dist)
	}
	n := layout.Numel(out.Shape)
	blocks := (n + 3) / 4
	d := philoxData{Dist: dist, WG: lim.wgSize(256)}
	p := NewParams(d.fields()...)
	p.SetU32("n", uint32(n)).SetU32("blocks", uint32(blocks)).SetU32("out_off", uint32(out.Offset))
	p.SetU32("seed_lo", uint32(seed)).SetU32("seed_hi", uint32(seed>>32))
	p.SetU32("off_lo", uint32(offset)).SetU32("off_hi", uint32(offset>>32))
	switch dist {
	case "uniform":
		top := float32(b)
		p.SetF32("lo", float32(a)).SetF32("span", float32(b-a)).SetF32("top", top)
		p.SetF32("below", math.Nextafter32(top, float32(math.Inf(-1))))
	case "normal":
		p.SetF32("mean", float32(a)).SetF32("sdev", float32(b))
	}
	groups, err := Grid(blocks, d.WG, lim)
	if err != nil {
		return Kernel{}, err
	}
	src, err := render("philox", d)
	if err != nil {
		return Kernel{}, err
	}
	return Kernel{Source: src, Entry: "main", Params: p.Bytes(), Groups: groups, Bindings: []Binding{{Name: "out"}}}, nil
}

// philoxData is the philox template's data and render-cache key (see
// srcKey): the distribution and the workgroup size.
type philoxData struct {
	Dist string
	WG   int
}

// fields are the params: counts, seed and offset halves, the output's
// offset, and the distribution's parameters.
func (d philoxData) fields() []ParamField {
	fields := []ParamField{{"n", "u32", 0}, {"blocks", "u32", 0}, {"seed_lo", "u32", 0}, {"seed_hi", "u32", 0},
		{"off_lo", "u32", 0}, {"off_hi", "u32", 0}, {"out_off", "u32", 0}}
	switch d.Dist {
	case "uniform":
		fields = append(fields, ParamField{"lo", "f32", 0}, ParamField{"span", "f32", 0}, ParamField{"top", "f32", 0}, ParamField{"below", "f32", 0})
	case "normal":
		fields = append(fields, ParamField{"mean", "f32", 0}, ParamField{"sdev", "f32", 0})
	}
	return fields
}

// Struct is the params' WGSL declaration.
func (d philoxData) Struct() string { return NewParams(d.fields()...).Struct() }

// Prelude is log1p for the normal distribution.
func (d philoxData) Prelude() string {
	if d.Dist == "normal" {
		return mustPrelude("log1p")
	}
	return ""
}
