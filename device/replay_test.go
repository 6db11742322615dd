//go:build cgo

package device

import (
	"errors"
	"strings"
	"testing"
)

// wgslDouble4 is wgslDouble over vec4s: same binding signature (read,
// read_write), but a shader that needs 16-byte bindings.
const wgslDouble4 = `
@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
	let i = id.x;
	if (i < arrayLength(&dst)) { dst[i] = src[i] * 2u; }
}`

// TestSmallBindingAfterVec4KernelInOneBatch is the class of bug the
// binding rule removes: without declared minimum binding sizes, wgpu
// derives each binding's minimum from the shader and, inside one compute
// pass, refreshes it only when the pipeline layout changes, so a scalar
// kernel bound to a 12-byte buffer after a vec4 kernel of the same
// signature failed the whole batch ("Buffer is bound with size 12 where
// the shader expects 16"). Both must run in one batch, without a replay.
func TestSmallBindingAfterVec4KernelInOneBatch(t *testing.T) {
	g := openTestGPU(t)
	g.SetBatchCap(1000)
	big := mustAlloc(t, g, 256)
	bigOut := mustAlloc(t, g, 256)
	mustWrite(t, g, big, fillU32(64, func(i int) uint32 { return uint32(i) }))
	replays := g.ReplayCount()
	for _, size := range []int64{4, 8, 12} {
		n := int(size / 4)
		small := mustAlloc(t, g, size)
		smallOut := mustAlloc(t, g, size)
		mustWrite(t, g, small, fillU32(n, func(i int) uint32 { return uint32(10 + i) }))
		mustRun(t, g, Kernel{Source: wgslDouble4, Bindings: []Binding{{Buf: big, ReadOnly: true}, {Buf: bigOut}}, Groups: [3]uint32{1, 1, 1}})
		mustRun(t, g, double(small, smallOut))
		mustRun(t, g, Kernel{Source: wgslDouble4, Bindings: []Binding{{Buf: big, ReadOnly: true}, {Buf: bigOut}}, Groups: [3]uint32{1, 1, 1}})
		checkU32(t, "the scalar kernel's small output", readU32(t, g, smallOut), fillU32(n, func(i int) uint32 { return uint32(20 + 2*i) }))
		g.Free(small)
		g.Free(smallOut)
	}
	checkU32(t, "the vec4 kernel's output", readU32(t, g, bigOut), fillU32(64, func(i int) uint32 { return uint32(2 * i) }))
	if d := g.ReplayCount() - replays; d != 0 {
		t.Errorf("valid work needed %d replays", d)
	}
	// A shader whose element needs more than one quantum fails when its
	// pipeline is created, and the batch goes on.
	const wide = `
@group(0) @binding(0) var<storage, read_write> m: array<mat4x4<f32>>;
@compute @workgroup_size(1)
fn main() { m[0] = m[0] * 2.0; }`
	err := g.Run(Kernel{Source: wide, Bindings: []Binding{{Buf: bigOut}}, Groups: [3]uint32{1, 1, 1}})
	if err == nil || !strings.Contains(err.Error(), "pipeline") {
		t.Errorf("a 64-byte element: err = %v, want a pipeline creation error", err)
	}
	mustRun(t, g, double(big, bigOut))
	checkU32(t, "after the rejected pipeline", readU32(t, g, bigOut), fillU32(64, func(i int) uint32 { return uint32(2 * i) }))
}

// failedAs checks that err reports a failed command: errors.Is finds
// ErrCommandFailed and wgpu's original error, and the CommandFailedError
// names the command. It returns that error.
func failedAs(t *testing.T, what string, err error, command string, tainted bool) *CommandFailedError {
	t.Helper()
	var fe *CommandFailedError
	if !errors.Is(err, ErrCommandFailed) || !errors.As(err, &fe) {
		t.Fatalf("%s: err = %v, want a CommandFailedError", what, err)
	}
	if fe.Command != command || fe.Tainted != tainted || fe.Failed != "bad" || !errors.Is(err, fe.Err) {
		t.Errorf("%s: %+v, want command %q (tainted %v) after bad", what, fe, command, tainted)
	}
	if !strings.Contains(fe.Err.Error(), "dispatch group size") {
		t.Errorf("%s: the original error is %v, want wgpu's invalid group size", what, fe.Err)
	}
	return fe
}

// TestFailedBatchIsReplayed records one batch holding good work of every
// kind (an in-place update, a dispatch, a staged upload, a clear and a
// copy, then dispatches with and without params) around a dispatch that
// wgpu rejects when the pass ends (InjectFaultForTesting) and one that
// reads its output. Submitting the batch replays it: everything but those
// two runs, their outputs report the failure, and the buffers work again
// once freed and reallocated.
func TestFailedBatchIsReplayed(t *testing.T) {
	g := openTestGPU(t)
	g.SetBatchCap(1000)
	const n = 64
	seq := func(base int) []uint32 { return fillU32(n, func(i int) uint32 { return uint32(base + i) }) }
	g.InjectFaultForTesting(func(k Kernel) bool { return k.Label == "bad" })
	defer g.InjectFaultForTesting(nil)
	buf := func() *Buffer { return mustAlloc(t, g, 4*n) }
	x, p, q, u, c, y, z, v, w := buf(), buf(), buf(), buf(), buf(), buf(), buf(), buf(), buf()
	mustWrite(t, g, x, seq(0))
	mustWrite(t, g, p, seq(0))
	mustWrite(t, g, q, seq(7))
	replays, submits := g.ReplayCount(), g.SubmitCount()

	mustRun(t, g, Kernel{Label: "update", Source: wgslInplace, Bindings: []Binding{{Buf: p}}, Groups: groupsFor(n)})
	mustRun(t, g, double(x, u))
	mustWrite(t, g, x, seq(100)) // x is read by the batch: a staged upload
	if err := g.Fill(q, 0, 4*n); err != nil {
		t.Fatal(err)
	}
	if err := g.Copy(c, 0, x, 0, 4*n); err != nil {
		t.Fatal(err)
	}
	bad := double(x, y)
	bad.Label = "bad"
	mustRun(t, g, bad)
	reader := double(y, z)
	reader.Label = "reader"
	mustRun(t, g, reader)
	mustRun(t, g, Kernel{Source: wgslAxpb, Bindings: []Binding{{Buf: x, ReadOnly: true}, {Buf: v}}, Params: axpbParams(3, 1, n), Groups: groupsFor(n)})
	mustRun(t, g, double(c, w))
	if g.SubmitCount() != submits {
		t.Fatal("the batch was submitted early")
	}

	checkU32(t, "in-place update before the failure", readU32(t, g, p), fillU32(n, func(i int) uint32 { return uint32(2*i + 1) }))
	if d := g.ReplayCount() - replays; d != 1 {
		t.Fatalf("%d replays, want 1", d)
	}
	checkU32(t, "dispatch before the failure", readU32(t, g, u), fillU32(n, func(i int) uint32 { return uint32(2 * i) }))
	checkU32(t, "staged upload", readU32(t, g, x), seq(100))
	checkU32(t, "clear", readU32(t, g, q), make([]uint32, n))
	checkU32(t, "copy", readU32(t, g, c), seq(100))
	checkU32(t, "dispatch with params after the failure", readU32(t, g, v), fillU32(n, func(i int) uint32 { return uint32(3*(100+i) + 1) }))
	checkU32(t, "independent dispatch after the failure", readU32(t, g, w), fillU32(n, func(i int) uint32 { return uint32(2 * (100 + i)) }))

	_, err := g.Read(y, 0, 4*n)
	failedAs(t, "Read of the failed kernel's output", err, "bad", false)
	_, err = g.Read(z, 0, 4*n)
	failedAs(t, "Read of the tainted kernel's output", err, "reader", true)
	failedAs(t, "Run reading it", g.Run(double(y, u)), "bad", false)
	failedAs(t, "Copy from it", g.Copy(u, 0, y, 0, 4*n), "bad", false)
	failedAs(t, "Write into it", g.Write(z, 0, u32bytes(seq(0))), "reader", true)
	failedAs(t, "Fill of it", g.Fill(y, 0, 4*n), "bad", false)
	checkU32(t, "u after the rejected uses", readU32(t, g, u), fillU32(n, func(i int) uint32 { return uint32(2 * i) }))
	if err := g.Sync(); err != nil {
		t.Fatalf("Sync after the replay: %v", err)
	}

	// Freed, their blocks are handed out again and work.
	blocks := map[*block]bool{y.blk: true, z.blk: true}
	g.Free(y)
	g.Free(z)
	y2, z2 := buf(), buf()
	if !blocks[y2.blk] || !blocks[z2.blk] {
		t.Errorf("the failed buffers' blocks were not reused")
	}
	mustWrite(t, g, y2, seq(5))
	mustRun(t, g, double(y2, z2))
	checkU32(t, "reused blocks", readU32(t, g, z2), fillU32(n, func(i int) uint32 { return uint32(2 * (5 + i)) }))
}

// TestFailedPassEndedByTransfer: a transfer recorded after a failing
// dispatch ends its compute pass, so the batch is replayed right there;
// the transfer then goes on in the next batch, or fails if it uses the
// failed output.
func TestFailedPassEndedByTransfer(t *testing.T) {
	g := openTestGPU(t)
	g.SetBatchCap(1000)
	const n = 64
	g.InjectFaultForTesting(func(k Kernel) bool { return k.Label == "bad" })
	defer g.InjectFaultForTesting(nil)
	x, y, a, b := mustAlloc(t, g, 4*n), mustAlloc(t, g, 4*n), mustAlloc(t, g, 4*n), mustAlloc(t, g, 4*n)
	mustWrite(t, g, x, fillU32(n, func(i int) uint32 { return uint32(i) }))
	mustRun(t, g, double(x, a))
	bad := double(x, y)
	bad.Label = "bad"
	mustRun(t, g, bad)
	if err := g.Write(b, 0, u32bytes(make([]uint32, n))); err != nil {
		t.Fatalf("Write of an unrelated buffer after a failed pass: %v", err)
	}
	failedAs(t, "Copy of the failed output after a failed pass", g.Copy(b, 0, y, 0, 4*n), "bad", false)
	checkU32(t, "work before the failure", readU32(t, g, a), fillU32(n, func(i int) uint32 { return uint32(2 * i) }))
	checkU32(t, "the write after it", readU32(t, g, b), make([]uint32, n))
}
