package wgsl

import "fmt"

// LineArgs are the operands of a kernel along lines of one dimension.
type LineArgs struct {
	Out, X Layout // same shape; a 0-d X counts as shape [1]
	Dim    int
	// InPlace says X lives in Out's buffer (with X's layout, normally
	// equal to Out's): it is read through the output binding.
	InPlace bool
	Limits  Limits
}

// Softmax returns the kernel writing softmax (log false) or log-softmax
// (log true) of X along Dim into Out, f32, in three passes over each line:
// the max m (NaN wins), s = Σ exp(x - m) accumulated in f32, then
// exp(x - m)/s or (x - m) - log s (as log1p(s - 1), accurate when one
// element dominates). A line whose max is not finite (a NaN,
// a +inf, or all -inf) is all NaN, as in torch.
//
// Lines of up to 32 elements, and side-by-side lines (Dim outer in
// memory) when there are at least 2048, run one invocation per line;
// otherwise one workgroup (64, or 256 from 2048 elements) per line.
//
// Bindings: "out" (read_write), then "x" (read) unless InPlace.
func Softmax(log bool, a LineArgs) (Kernel, error) {
	li, d, err := lineKernel("Softmax", F32, a)
	if err != nil || li.nLines == 0 || li.length == 0 {
		return Kernel{}, err
	}
	d.Log = log
	d.Prelude = mustPrelude("isnan_", "isinf_", "log1p")
	serial := li.length <= serialMaxRed || (li.sideBySide(0) && li.nLines >= serialSideBySide)
	d.Mode, d.WG = "group", a.Limits.orDefault().wgSize(64)
	if serial {
		d.Mode, d.WG = "serial", a.Limits.orDefault().wgSize(256)
	} else if li.length >= 2048 {
		d.WG = a.Limits.orDefault().wgSize(256)
	}
	return d.kernel("softmax", fmt.Sprintf("%v|%s|%d|%v|%d", log, d.Mode, d.WG, a.InPlace, len(li.shape)), li, serial, a)
}

// CumSum returns the kernel writing the inclusive cumulative sum of X
// along Dim into Out, typ f32 or i32 (i32 wraps; torch would return
// int64). One invocation walks each line serially, accumulating in typ:
// O(length) time per line and no parallelism along Dim, which is fine
// for v1's uses (the CPU accumulates f32 in float64; results agree
// within float tolerance).
//
// Bindings: "out" (read_write), then "x" (read) unless InPlace.
func CumSum(typ string, a LineArgs) (Kernel, error) {
	if typ != F32 && typ != I32 {
		return Kernel{}, fmt.Errorf("wgsl: CumSum: type %q (want f32 or i32)", typ)
	}
	li, d, err := lineKernel("CumSum", typ, a)
	if err != nil || li.nLines == 0 || li.length == 0 {
		return Kernel{}, err
	}
	d.WG = a.Limits.orDefault().wgSize(256)
	return d.kernel("cumsum", fmt.Sprintf("%s|%d|%v|%d", typ, d.WG, a.InPlace, len(li.shape)), li, true, a)
}

type lineData struct {
	Struct, T, Mode, Prelude, KeptWalk string
	WG                                 int
	Log, InPlace                       bool
	p                                  *Params
}

// lineKernel plans the lines of a LineArgs kernel and fills its params:
// nout, len, xstride, ostride, offs (x, out), ksh, kx, ko.
func lineKernel(what, typ string, a LineArgs) (lines, *lineData, error) {
	li, err := planLines(what, []Layout{a.X, a.Out}, a.Dim, allDims, false)
	if err != nil {
		return li, nil, err
	}
	kr := len(li.shape)
	p := NewParams(ParamField{"nout", "u32", 0}, ParamField{"len", "u32", 0}, ParamField{"xstride", "u32", 0}, ParamField{"ostride", "u32", 0},
		ParamField{"offs", "array", 1}, ParamField{"ksh", "array", vec4s(kr)}, ParamField{"kx", "array", vec4s(kr)}, ParamField{"ko", "array", vec4s(kr)})
	p.SetU32("nout", uint32(li.nLines)).SetU32("len", uint32(li.length)).SetU32("xstride", uint32(li.dstep[0])).SetU32("ostride", uint32(li.dstep[1]))
	p.SetArray("offs", u32s([]int{a.X.Offset, a.Out.Offset}, 4, 0)).SetArray("ksh", u32s(li.shape, 4*vec4s(kr), 1))
	p.SetArray("kx", u32s(li.strides[0], 4*vec4s(kr), 0)).SetArray("ko", u32s(li.strides[1], 4*vec4s(kr), 0))
	d := &lineData{Struct: p.Struct(), T: typ, InPlace: a.InPlace, p: p,
		KeptWalk: walk{Flat: "o", Shape: "ksh", Rank: kr, Vars: []string{"xb", "ob"},
			Inits: []string{"params.offs[0].x", "params.offs[0].y"}, Strides: []string{"kx", "ko"}}.Code()}
	return li, d, nil
}

func (d *lineData) kernel(tmpl, key string, li lines, serial bool, a LineArgs) (Kernel, error) {
	lim := a.Limits.orDefault()
	var groups [3]uint32
	var err error
	if serial {
		groups, err = Grid(li.nLines, d.WG, lim)
	} else {
		groups, err = Grid(li.nLines, 1, lim)
	}
	if err != nil {
		return Kernel{}, err
	}
	src, err := render(tmpl, key, d)
	if err != nil {
		return Kernel{}, err
	}
	k := Kernel{Source: src, Entry: "main", Params: d.p.Bytes(), Groups: groups, Bindings: []Binding{{Name: "out"}}}
	if !a.InPlace {
		k.Bindings = append(k.Bindings, Binding{Name: "x", ReadOnly: true})
	}
	return k, nil
}
