package wgsl_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/tessera-ml/tessera/cpu"
	"github.com/tessera-ml/tessera/device"
	"github.com/tessera-ml/tessera/internal/devtest/gpuleaf"
	"github.com/tessera-ml/tessera/kernels/wgsl"
)

// sharedGPU is the one device every GPU test of the package shares
// (opening lavapipe costs more than most kernels): any adapter, CPU
// adapters (lavapipe) included.
var sharedGPU = gpuleaf.NewShared(func() (*device.GPU, error) {
	return device.Open(device.Options{Index: -1, AllowCPU: true})
}, device.ErrNoAdapter, device.ErrNotCompiled)

// openGPU returns the shared device. Without one the test skips, or
// fails under TESSERA_REQUIRE_GPU=1.
var openGPU = sharedGPU.Get

func TestMain(m *testing.M) { os.Exit(sharedGPU.Main(m)) }

// limits converts the device's caps.
func limits(g *device.GPU) wgsl.Limits {
	c := g.Caps()
	return wgsl.Limits{
		MaxWorkgroupSize:          min(c.MaxInvocationsPerWorkgroup, c.MaxWorkgroupSizeX),
		MaxWorkgroupStorage:       c.MaxWorkgroupStorageSize,
		MaxWorkgroupsPerDimension: c.MaxWorkgroupsPerDimension,
	}
}

// bufs maps binding names to buffers.
type bufs map[string]*device.Buffer

// run records k with its bindings resolved by name.
func run(t testing.TB, g *device.GPU, k wgsl.Kernel, b bufs) {
	t.Helper()
	dk := device.Kernel{Source: k.Source, Entry: k.Entry, Params: k.Params, Groups: k.Groups}
	for _, bd := range k.Bindings {
		buf := b[bd.Name]
		if buf == nil {
			t.Fatalf("no buffer for binding %q", bd.Name)
		}
		dk.Bindings = append(dk.Bindings, device.Binding{Buf: buf, ReadOnly: bd.ReadOnly})
	}
	if err := g.Run(dk); err != nil {
		t.Fatalf("Run: %v\n%s", err, numbered(k.Source))
	}
}

// runPlan runs a plan, allocating its scratch buffer.
func runPlan(t testing.TB, g *device.GPU, p wgsl.Plan, b bufs) {
	t.Helper()
	if p.Scratch > 0 {
		s := alloc(t, g, int(p.Scratch))
		defer g.Free(s)
		b["scratch"] = s
	}
	for _, k := range p.Kernels {
		run(t, g, k, b)
	}
}

func numbered(src string) string {
	out, line := "", 1
	start := 0
	for i := 0; i <= len(src); i++ {
		if i == len(src) || src[i] == '\n' {
			out += fmt.Sprintf("%4d %s\n", line, src[start:i])
			line++
			start = i + 1
		}
	}
	return out
}

func alloc(t testing.TB, g *device.GPU, bytes int) *device.Buffer {
	t.Helper()
	b, err := g.Alloc(int64(max(bytes, 4)))
	if err != nil {
		t.Fatalf("Alloc(%d): %v", bytes, err)
	}
	t.Cleanup(func() { g.Free(b) })
	return b
}

func upload(t testing.TB, g *device.GPU, data []byte) *device.Buffer {
	t.Helper()
	b := alloc(t, g, len(data))
	if len(data) > 0 {
		if err := g.Write(b, 0, data); err != nil {
			t.Fatalf("Write: %v", err)
		}
	}
	return b
}

func read(t testing.TB, g *device.GPU, b *device.Buffer) []byte {
	t.Helper()
	out, err := g.Read(b, 0, b.Size())
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return out
}

func f32bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func i32bytes(v []int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

func boolbytes(v []bool) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		if x {
			b[4*i] = 1
		}
	}
	return b
}

func bytesF32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func bytesI32(b []byte) []int32 {
	v := make([]int32, len(b)/4)
	for i := range v {
		v[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func bytesU32(b []byte) []uint32 {
	v := make([]uint32, len(b)/4)
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return v
}

// readF32 etc. read a whole buffer.
func readF32(t testing.TB, g *device.GPU, b *device.Buffer) []float32 { return bytesF32(read(t, g, b)) }
func readI32(t testing.TB, g *device.GPU, b *device.Buffer) []int32   { return bytesI32(read(t, g, b)) }

// rng is a small deterministic generator for test data.
type rng uint64

func (r *rng) next() uint64 {
	*r ^= *r << 13
	*r ^= *r >> 7
	*r ^= *r << 17
	return uint64(*r)
}

// f32s returns n values in [lo, hi).
func (r *rng) f32s(n int, lo, hi float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(lo + (hi-lo)*float64(r.next()>>11)/(1<<53))
	}
	return v
}

func (r *rng) i32s(n int, lo, hi int) []int32 {
	v := make([]int32, n)
	for i := range v {
		v[i] = int32(lo + int(r.next()%uint64(hi-lo)))
	}
	return v
}

// cl converts a wgsl layout for the cpu package.
func cl(l wgsl.Layout) cpu.Layout { return cpu.Layout(l) }

// cpuReduce is the CPU reference of a reduction op ("sum", "max" or
// "min"), accumulated in float64; max and min propagate NaN, and an
// empty extent gives the op's identity (0, -Inf or +Inf).
func cpuReduce[T cpu.Number](op string, dst []T, dl cpu.Layout, x []T, xl cpu.Layout) {
	add := func(a, v float64) float64 { return a + v }
	f := cpu.FoldOf(0, add)
	switch op {
	case "max":
		f = cpu.FoldOf(math.Inf(-1), func(a, v float64) float64 { return pickNaN(v > a, a, v) })
	case "min":
		f = cpu.FoldOf(math.Inf(1), func(a, v float64) float64 { return pickNaN(v < a, a, v) })
	}
	cpu.Reduce(cpu.Fold[T, float64]{
		Identity: f.Identity, Merge: f.Merge,
		Add: func(a float64, v T) float64 { return f.Add(a, float64(v)) },
		Out: func(a float64) T { return T(a) },
	}, dst, dl, x, xl)
}

// pickNaN returns v when better or v is NaN, else a (a NaN a stays NaN).
func pickNaN(better bool, a, v float64) float64 {
	if better || v != v {
		return v
	}
	return a
}

// cpuArgReduce is the CPU reference of an arg-reduction op ("max" or
// "min"): the first best element, NaN beating every number.
func cpuArgReduce[T cpu.Number](op string, vals []T, vl cpu.Layout, idx []int32, il cpu.Layout, x []T, xl cpu.Layout, dim int) {
	better := func(v, best T) bool { return v > best || (v != v && best == best) }
	if op == "min" {
		better = func(v, best T) bool { return v < best || (v != v && best == best) }
	}
	cpu.ArgReduce(better, vals, vl, idx, il, x, xl, dim)
}
