package wgsl

import (
	"fmt"
	"math"

	"github.com/tessera-ml/tessera/internal/layout"
)

// A Window is the geometry of Im2Col and Col2Im over NCHW tensors: C
// channels of an input of extent (H, W) with padding (PH, PW) on both
// sides, a KH×KW kernel with elements spaced (DH, DW) apart, moved by
// (SH, SW), taking (OH, OW) positions. It has the fields of cpu.Window.
type Window struct {
	C, H, W        int
	OH, OW         int
	KH, KW         int
	SH, SW, DH, DW int
	PH, PW         int
}

// im2colData is the im2col and col2im templates' data and render-cache
// key (see srcKey): which kernel and the workgroup size.
type im2colData struct {
	Col2Im bool
	WG     int
}

// fields are the params: the invocation count, the window's geometry,
// the output's offset and the input's offset and strides.
func (d im2colData) fields() []ParamField {
	var f []ParamField
	for _, name := range []string{"n", "l", "c", "h", "w", "oh", "ow", "kh", "kw", "sh", "sw", "dh", "dw", "ph", "pw", "ooff"} {
		f = append(f, ParamField{name, "u32", 0})
	}
	if d.Col2Im {
		return append(f, ParamField{"coff", "u32", 0}, ParamField{"cs0", "u32", 0}, ParamField{"cs1", "u32", 0}, ParamField{"cs2", "u32", 0})
	}
	return append(f, ParamField{"xoff", "u32", 0}, ParamField{"xs0", "u32", 0}, ParamField{"xs1", "u32", 0},
		ParamField{"xs2", "u32", 0}, ParamField{"xs3", "u32", 0}, ParamField{"pad", "f32", 0})
}

// Struct is the params' WGSL declaration.
func (d im2colData) Struct() string { return NewParams(d.fields()...).Struct() }

// params returns the params shared by both kernels.
func (g Window) params(d im2colData, n, outOff int) *Params {
	p := NewParams(d.fields()...)
	for name, v := range map[string]int{"n": n, "l": g.OH * g.OW, "c": g.C, "h": g.H, "w": g.W, "oh": g.OH, "ow": g.OW,
		"kh": g.KH, "kw": g.KW, "sh": g.SH, "sw": g.SW, "dh": g.DH, "dw": g.DW, "ph": g.PH, "pw": g.PW, "ooff": outOff} {
		p.SetU32(name, uint32(v))
	}
	return p
}

// check rejects geometry the kernels cannot address.
func (g Window) check(what string) error {
	if g.KH < 1 || g.KW < 1 || g.SH < 1 || g.SW < 1 || g.DH < 1 || g.DW < 1 || g.PH < 0 || g.PW < 0 || g.C < 0 || g.H < 0 || g.W < 0 || g.OH < 0 || g.OW < 0 {
		return fmt.Errorf("wgsl: %s: bad window %+v", what, g)
	}
	if g.H+g.PH >= math.MaxInt32 || g.W+g.PW >= math.MaxInt32 || (g.KH-1)*g.DH >= math.MaxInt32 || (g.KW-1)*g.DW >= math.MaxInt32 {
		return fmt.Errorf("wgsl: %s: window %+v exceeds the 2^31 a kernel addresses", what, g)
	}
	return nil
}

// Im2Col returns the kernel writing the columns of x (N, C, H, W, any
// non-negative strides) into out, the contiguous (N, C·KH·KW, OH·OW)
// view at out.Offset, as cpu.Im2Col: element (b, (c·KH + i)·KW + j,
// oh·OW + ow) is x[b, c, oh·SH - PH + i·DH, ow·SW - PW + j·DW], or pad
// outside x. f32 only.
//
// Bindings: "out" (read_write), "x" (read).
func Im2Col(out, x Layout, g Window, pad float32, lim Limits) (Kernel, error) {
	lim = lim.orDefault()
	if err := g.check("Im2Col"); err != nil {
		return Kernel{}, err
	}
	if len(x.Shape) != 4 || len(out.Shape) != 3 || x.Shape[1] != g.C || x.Shape[2] != g.H || x.Shape[3] != g.W ||
		!sameShape(out.Shape, []int{x.Shape[0], g.C * g.KH * g.KW, g.OH * g.OW}) || !layout.IsContiguous(out.Shape, out.Strides) {
		return Kernel{}, fmt.Errorf("wgsl: Im2Col: out %v (contiguous) and x %v do not match the window %+v", out.Shape, x.Shape, g)
	}
	if err := checkLayout(x, "Im2Col input"); err != nil {
		return Kernel{}, err
	}
	d := im2colData{WG: lim.wgSize(256)}
	n := layout.Numel(out.Shape)
	p := g.params(d, n, out.Offset)
	p.SetU32("xoff", uint32(x.Offset)).SetF32("pad", pad)
	for k, name := range []string{"xs0", "xs1", "xs2", "xs3"} {
		p.SetU32(name, uint32(x.Strides[k]))
	}
	return windowKernel("im2col", d, p, n, "x", lim)
}

// Col2Im returns the kernel summing the columns cols (N, C·KH·KW,
// OH·OW, any non-negative strides) into out, the contiguous (N, C, H, W)
// view at out.Offset, as cpu.Col2Im: each output element adds the
// entries of the window positions that read it, over kernel elements in
// row-major order (the CPU's order, so results are bitwise equal). One
// loop of KH·KW iterations per invocation: kernels of more elements than
// Limits.MaxLoopTrips allows are an error. f32 only.
//
// Bindings: "out" (read_write), "cols" (read).
func Col2Im(out, cols Layout, g Window, lim Limits) (Kernel, error) {
	lim = lim.orDefault()
	if err := g.check("Col2Im"); err != nil {
		return Kernel{}, err
	}
	if len(cols.Shape) != 3 || len(out.Shape) != 4 || !layout.IsContiguous(out.Shape, out.Strides) ||
		!sameShape(out.Shape, []int{cols.Shape[0], g.C, g.H, g.W}) || !sameShape(cols.Shape, []int{out.Shape[0], g.C * g.KH * g.KW, g.OH * g.OW}) {
		return Kernel{}, fmt.Errorf("wgsl: Col2Im: out %v (contiguous) and cols %v do not match the window %+v", out.Shape, cols.Shape, g)
	}
	if err := checkLayout(cols, "Col2Im columns"); err != nil {
		return Kernel{}, err
	}
	if trips(g.KH*g.KW) > lim.MaxLoopTrips {
		return Kernel{}, fmt.Errorf("wgsl: Col2Im: a %d×%d kernel loops more than the %d trips an invocation may take", g.KH, g.KW, lim.MaxLoopTrips)
	}
	d := im2colData{Col2Im: true, WG: lim.wgSize(256)}
	n := layout.Numel(out.Shape)
	p := g.params(d, n, out.Offset)
	p.SetU32("coff", uint32(cols.Offset))
	for k, name := range []string{"cs0", "cs1", "cs2"} {
		p.SetU32(name, uint32(cols.Strides[k]))
	}
	return windowKernel("col2im", d, p, n, "cols", lim)
}

// windowKernel renders template name and returns its kernel over n
// invocations, binding "out" and the input in.
func windowKernel(name string, d im2colData, p *Params, n int, in string, lim Limits) (Kernel, error) {
	groups, err := Grid(n, d.WG, lim)
	if err != nil {
		return Kernel{}, err
	}
	src, err := render(name, d)
	if err != nil {
		return Kernel{}, err
	}
	return Kernel{Source: src, Entry: "main", Params: p.Bytes(), Groups: groups,
		Bindings: []Binding{{Name: "out"}, {Name: in, ReadOnly: true}}}, nil
}
