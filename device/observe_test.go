//go:build cgo

package device

import (
	"reflect"
	"testing"
)

// TestObservePipelines: the observer sees every recorded dispatch with its
// label, source, entry point and the layout its pipeline was compiled
// with, a buffer bound twice by an in-place kernel making both entries
// read_write; dispatches of no workgroups are not recorded, so not seen;
// nil stops it.
func TestObservePipelines(t *testing.T) {
	g := openTestGPU(t)
	const n = 64
	x, y, z := mustAlloc(t, g, 4*n), mustAlloc(t, g, 4*n), mustAlloc(t, g, 4*n)
	var seen []PipelineUse
	g.ObservePipelinesForTesting(func(u PipelineUse) { seen = append(seen, u) })
	mustRun(t, g, Kernel{Label: "axpb", Source: wgslAxpb, Bindings: []Binding{{Buf: x, ReadOnly: true}, {Buf: y}}, Params: axpbParams(3, 1, n), Groups: groupsFor(n)})
	mustRun(t, g, Kernel{Label: "add in place", Source: wgslAdd, Bindings: []Binding{{Buf: x, ReadOnly: true}, {Buf: z, ReadOnly: true}, {Buf: x}}, Groups: groupsFor(n)})
	mustRun(t, g, Kernel{Label: "empty", Source: wgslAdd, Bindings: []Binding{{Buf: x, ReadOnly: true}, {Buf: z, ReadOnly: true}, {Buf: y}}})
	g.ObservePipelinesForTesting(nil)
	mustRun(t, g, Kernel{Label: "unobserved", Source: wgslInplace, Bindings: []Binding{{Buf: y}}, Groups: groupsFor(n)})
	if err := g.Sync(); err != nil {
		t.Fatal(err)
	}
	want := []PipelineUse{
		{Label: "axpb", Source: wgslAxpb, Entry: "main", Writable: []bool{false, true}, Params: true},
		{Label: "add in place", Source: wgslAdd, Entry: "main", Writable: []bool{true, false, true}},
	}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("observed %+v, want %+v", seen, want)
	}
}
