package wgsl

import (
	"embed"
	"fmt"
	"strings"
	"sync"
	"text/template"

	"github.com/tessera-ml/tessera/internal/layout"
)

// Element types, as the generators name them. Bool is stored as u32 (0 or
// 1) and appears in expressions as a WGSL bool.
const (
	F32  = "f32"
	I32  = "i32"
	Bool = "bool"
)

// MaxRank is the largest rank a layout may have (after dropping size-1
// dimensions and merging contiguous ones, see doc.go).
const MaxRank = 8

// A Layout is a strided view of a buffer bound whole: element
// (i0, i1, ...) lives at element Offset + i0*Strides[0] + i1*Strides[1] + ...
// Strides are in elements and must not be negative; a stride of 0
// broadcasts. It has the fields of cpu.Layout, so a cpu.Layout converts
// with wgsl.Layout(l).
type Layout struct {
	Shape   []int
	Strides []int
	Offset  int
}

// Contiguous returns the row-major layout of shape at offset 0; a
// size-0 dimension counts as 1, as in PyTorch (no stride 0 in an empty
// layout).
func Contiguous(shape ...int) Layout {
	return Layout{Shape: shape, Strides: layout.ContiguousStrides(shape)}
}

// Limits are the device limits the generators need: the capability
// snapshot a caller copies from its device. From device.Caps:
//
//	wgsl.Limits{
//		MaxWorkgroupSize:          min(c.MaxInvocationsPerWorkgroup, c.MaxWorkgroupSizeX),
//		MaxWorkgroupStorage:       c.MaxWorkgroupStorageSize,
//		MaxWorkgroupsPerDimension: c.MaxWorkgroupsPerDimension,
//	}
//
// MaxLoopTrips is no device capability WebGPU reports: it bounds the loop
// iterations of one invocation (see loops.go), and its default,
// DefaultMaxLoopTrips, suits every adapter. Tests lower it to run the
// plans that split long loops on small inputs.
//
// Zero fields mean WebGPU's defaults (DefaultLimits).
type Limits struct {
	MaxWorkgroupSize          int // invocations per workgroup (and along x)
	MaxWorkgroupStorage       int // bytes of var<workgroup> memory
	MaxWorkgroupsPerDimension int // bound on each of Kernel.Groups
	MaxLoopTrips              int // loop iterations per invocation, all loops together
}

// DefaultLimits are WebGPU's default limits, which every adapter meets,
// and DefaultMaxLoopTrips.
func DefaultLimits() Limits {
	return Limits{MaxWorkgroupSize: 256, MaxWorkgroupStorage: 16 << 10, MaxWorkgroupsPerDimension: 65535, MaxLoopTrips: DefaultMaxLoopTrips}
}

// orDefault fills zero fields with the defaults.
func (l Limits) orDefault() Limits {
	d := DefaultLimits()
	if l.MaxWorkgroupSize <= 0 {
		l.MaxWorkgroupSize = d.MaxWorkgroupSize
	}
	if l.MaxWorkgroupStorage <= 0 {
		l.MaxWorkgroupStorage = d.MaxWorkgroupStorage
	}
	if l.MaxWorkgroupsPerDimension <= 0 {
		l.MaxWorkgroupsPerDimension = d.MaxWorkgroupsPerDimension
	}
	if l.MaxLoopTrips <= 0 {
		l.MaxLoopTrips = d.MaxLoopTrips
	}
	return l
}

// wgSize returns the largest power of two ≤ min(want, MaxWorkgroupSize).
func (l Limits) wgSize(want int) int {
	m := min(want, l.MaxWorkgroupSize)
	w := 1
	for w*2 <= m {
		w *= 2
	}
	return w
}

// A Binding is one storage buffer a kernel expects at @group(0)
// @binding(i), i being its position in Kernel.Bindings. Name is the role
// of the buffer ("out", "x", "index", ...; see each generator), ReadOnly
// whether the shader declares it var<storage, read>.
type Binding struct {
	Name     string
	ReadOnly bool
}

// A Kernel is one dispatch: the WGSL source (identical calls return the
// identical string, so a pipeline cache keyed by source text hits without
// hashing), its entry point, the storage bindings it expects in order, the
// uniform parameters for @group(1) @binding(0) and the workgroup grid.
// Groups with a 0 mean there is nothing to do.
type Kernel struct {
	Source   string
	Entry    string
	Bindings []Binding
	Params   []byte
	Groups   [3]uint32
}

// A Plan is a sequence of kernels run in order. When Scratch > 0 the
// caller allocates a temporary buffer of that many bytes, binds it where a
// binding is named "scratch", and frees it after the last kernel.
type Plan struct {
	Kernels []Kernel
	Scratch int64
}

// Grid returns the workgroup counts covering n invocations in workgroups
// of wgSize: (ceil(n/wgSize), 1, 1), folded into (x, y) when that exceeds
// lim.MaxWorkgroupsPerDimension. Shaders recover the linear workgroup as
// workgroup_id.x + workgroup_id.y * num_workgroups.x and guard against the
// surplus of the fold. n = 0 gives (0, 1, 1): nothing to run.
func Grid(n, wgSize int, lim Limits) ([3]uint32, error) {
	lim = lim.orDefault()
	if n < 0 || wgSize <= 0 {
		return [3]uint32{}, fmt.Errorf("wgsl: Grid(%d, %d): bad size", n, wgSize)
	}
	if n == 0 {
		return [3]uint32{0, 1, 1}, nil
	}
	if n >= 1<<31 {
		return [3]uint32{}, fmt.Errorf("wgsl: %d invocations exceed the 2^31 a kernel addresses", n)
	}
	groups := (n + wgSize - 1) / wgSize
	maxD := lim.MaxWorkgroupsPerDimension
	if groups <= maxD {
		return [3]uint32{uint32(groups), 1, 1}, nil
	}
	gy := (groups + maxD - 1) / maxD
	if gy > maxD {
		return [3]uint32{}, fmt.Errorf("wgsl: %d workgroups exceed %d×%d", groups, maxD, maxD)
	}
	gx := (groups + gy - 1) / gy
	return [3]uint32{uint32(gx), uint32(gy), 1}, nil
}

// storageType is the WGSL type an element type is stored as.
func storageType(t string) (string, error) {
	switch t {
	case F32, I32:
		return t, nil
	case Bool:
		return "u32", nil
	}
	return "", fmt.Errorf("wgsl: unknown element type %q (want f32, i32 or bool)", t)
}

//go:embed *.wgsl
var files embed.FS

// templates holds every .wgsl template. They only substitute: what they
// print is computed in Go, by the generators into the data or by methods
// of the data (see srcKey); dict only bundles values for a sub-template.
var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"dict": dict,
}).ParseFS(files, "*.wgsl"))

// sources caches rendered sources: srcKey -> string. The key is the
// template's name and the very value it renders, so it holds everything
// the source depends on: two requests share a source exactly when they
// render the same data. Equal requests return the very same string.
var sources sync.Map

// A srcKey is a render-cache key: a template and its data. The data is a
// plain value (fields of strings, ints, bools and arrays or structs of
// them; TestRenderCache checks the types that reach the cache): what the
// template reads, through fields and the methods it calls on them, is
// decided by the value alone, so a key cannot leave out something the
// source depends on. Shapes, strides and scalars that vary per call stay
// out of the data and travel in the params.
type srcKey[D comparable] struct {
	name string
	data D
}

// execute renders the key's template with its data, uncached.
func (k srcKey[D]) execute() (string, error) {
	var b strings.Builder
	if err := templates.ExecuteTemplate(&b, k.name, k.data); err != nil {
		return "", fmt.Errorf("wgsl: rendering %s: %w", k.name, err)
	}
	return b.String(), nil
}

// render returns template name executed with data, cached under
// (name, data): see srcKey.
func render[D comparable](name string, data D) (string, error) {
	k := srcKey[D]{name, data}
	if s, ok := sources.Load(k); ok {
		return s.(string), nil
	}
	s, err := k.execute()
	if err != nil {
		return "", err
	}
	v, _ := sources.LoadOrStore(k, s)
	return v.(string), nil
}

// dict builds the argument of a sub-template call, {{template "name"
// (dict "Key" value ...)}}, from key/value pairs.
func dict(kv ...any) (map[string]any, error) {
	if len(kv)%2 != 0 {
		return nil, fmt.Errorf("dict: odd number of arguments")
	}
	m := make(map[string]any, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		k, ok := kv[i].(string)
		if !ok {
			return nil, fmt.Errorf("dict: key %v is not a string", kv[i])
		}
		m[k] = kv[i+1]
	}
	return m, nil
}

// ax returns the WGSL access to element i of the params array field
// (array<vec4<u32>, N>): params.field[i/4].xyzw[i%4].
func ax(field string, i int) string {
	return fmt.Sprintf("params.%s[%d].%c", field, i/4, "xyzw"[i%4])
}
