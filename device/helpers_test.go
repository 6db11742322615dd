//go:build cgo

package device

import (
	"encoding/binary"
	"testing"

	"github.com/tessera-ml/tessera/internal/devtest/gpuleaf"
)

// openTestGPU opens a GPU of its own for the test, on any adapter, CPU
// adapters (lavapipe) included, with the options mods set, and closes it
// when the test ends. Without an adapter the test skips, or fails under
// TESSERA_REQUIRE_GPU=1 (gpuleaf.Check).
func openTestGPU(t testing.TB, mods ...func(*Options)) *GPU {
	t.Helper()
	o := Options{Index: -1, AllowCPU: true}
	for _, m := range mods {
		m(&o)
	}
	g, err := Open(o)
	gpuleaf.Check(t, err, ErrNoAdapter)
	t.Cleanup(func() {
		if err := g.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return g
}

func u32bytes(v []uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}

func bytesU32(b []byte) []uint32 {
	v := make([]uint32, len(b)/4)
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return v
}

func fillU32(n int, f func(i int) uint32) []uint32 {
	v := make([]uint32, n)
	for i := range v {
		v[i] = f(i)
	}
	return v
}

func mustAlloc(t testing.TB, g *GPU, size int64) *Buffer {
	t.Helper()
	b, err := g.Alloc(size)
	if err != nil {
		t.Fatalf("Alloc(%d): %v", size, err)
	}
	return b
}

func mustWrite(t testing.TB, g *GPU, b *Buffer, v []uint32) {
	t.Helper()
	if err := g.Write(b, 0, u32bytes(v)); err != nil {
		t.Fatalf("Write: %v", err)
	}
}

func mustRun(t testing.TB, g *GPU, k Kernel) {
	t.Helper()
	if err := g.Run(k); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func readU32(t testing.TB, g *GPU, b *Buffer) []uint32 {
	t.Helper()
	out, err := g.Read(b, 0, b.Size())
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return bytesU32(out)
}

func checkU32(t testing.TB, what string, got, want []uint32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: [%d] = %d, want %d (got %v...)", what, i, got[i], want[i], got[:min(len(got), 8)])
		}
	}
}

// Test kernels: u32 arithmetic, so results are exact.
const (
	// wgslDouble: dst = src * 2.
	wgslDouble = `
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
	let i = id.x;
	if (i < arrayLength(&dst)) { dst[i] = src[i] * 2u; }
}`
	// wgslAxpb: dst = src * p.a + p.b for i < p.n (Params).
	wgslAxpb = `
struct P { a: u32, b: u32, n: u32, pad: u32 }
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(1) @binding(0) var<uniform> p: P;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
	let i = id.x;
	if (i < p.n) { dst[i] = src[i] * p.a + p.b; }
}`
	// wgslAdd: dst = x + y.
	wgslAdd = `
@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read> y: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
	let i = id.x;
	if (i < arrayLength(&dst)) { dst[i] = x[i] + y[i]; }
}`
	// wgslInplace: x = x * 2 + 1 through one read_write binding.
	wgslInplace = `
@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
	let i = id.x;
	if (i < arrayLength(&x)) { x[i] = x[i] * 2u + 1u; }
}`
)

func axpbParams(a, b, n uint32) []byte { return u32bytes([]uint32{a, b, n, 0}) }

func groupsFor(n int) [3]uint32 { return [3]uint32{uint32((n + 63) / 64), 1, 1} }

func double(src, dst *Buffer) Kernel {
	return Kernel{Source: wgslDouble, Bindings: []Binding{{Buf: src, ReadOnly: true}, {Buf: dst}}, Groups: groupsFor(int(dst.Size() / 4))}
}
