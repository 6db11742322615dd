//go:build cgo

package device

import (
	"testing"
	"unsafe"

	"github.com/rajveermalviya/go-webgpu/wgpu"
)

// TestBindingLayout pins the layout rawHandle relies on: go-webgpu's
// Queue and Buffer are two C pointers, the handle second.
func TestBindingLayout(t *testing.T) {
	p := unsafe.Sizeof(uintptr(0))
	if unsafe.Sizeof(wgpu.Queue{}) != 2*p || unsafe.Sizeof(wgpu.Buffer{}) != 2*p {
		t.Fatalf("wgpu.Queue is %d bytes and wgpu.Buffer %d, want two pointers each: the binding changed, update callbacks.go",
			unsafe.Sizeof(wgpu.Queue{}), unsafe.Sizeof(wgpu.Buffer{}))
	}
}
