//go:build cgo

package device

/*
#include <stddef.h>
#include <stdint.h>

// Prototypes of the two wgpu-native 0.17 functions used here (webgpu.h),
// declared with compatible types so this file needs no header: the
// library itself is linked by the binding. Handles are opaque pointers,
// enums 32-bit, WGPUMapModeFlags a uint32_t.
typedef void *tesseraQueue;
typedef void *tesseraBuffer;
typedef void (*tesseraWorkDoneCallback)(uint32_t status, void *userdata);
typedef void (*tesseraMapCallback)(uint32_t status, void *userdata);
void wgpuQueueOnSubmittedWorkDone(tesseraQueue queue, tesseraWorkDoneCallback callback, void *userdata);
void wgpuBufferMapAsync(tesseraBuffer buffer, uint32_t mode, size_t offset, size_t size, tesseraMapCallback callback, void *userdata);

extern void tesseraCallbackGo(uint32_t status, uintptr_t id);

static void tesseraCallbackC(uint32_t status, void *userdata) {
	tesseraCallbackGo(status, (uintptr_t)userdata);
}

static void tesseraOnSubmittedWorkDone(tesseraQueue q, uintptr_t id) {
	wgpuQueueOnSubmittedWorkDone(q, tesseraCallbackC, (void *)id);
}

static void tesseraMapAsync(tesseraBuffer b, uint32_t mode, size_t offset, size_t size, uintptr_t id) {
	wgpuBufferMapAsync(b, mode, offset, size, tesseraCallbackC, (void *)id);
}
*/
import "C"

import (
	"runtime/cgo"
	"unsafe"

	"github.com/rajveermalviya/go-webgpu/wgpu"
)

// The binding's Queue.OnSubmittedWorkDone and Buffer.MapAsync hand
// wgpu-native the address of a Go local holding the callback's
// cgo.Handle; wgpu-native keeps it until the callback fires in a later
// Submit or Poll, by which time the garbage collector may have freed it,
// and the process dies with "misuse of an invalid Handle". These
// wrappers pass the handle's integer value itself as the userdata, so
// no Go memory is retained by C.

//export tesseraCallbackGo
func tesseraCallbackGo(status C.uint32_t, id C.uintptr_t) {
	h := cgo.Handle(id)
	f := h.Value().(func(uint32))
	h.Delete()
	f(uint32(status))
}

// rawHandle returns the C handle inside a binding object. go-webgpu
// v0.17.1 declares Queue and Buffer as struct{ deviceRef, ref } of two C
// pointers; TestBindingLayout pins that layout.
func rawHandle[T wgpu.Queue | wgpu.Buffer](p *T) unsafe.Pointer {
	return (*[2]unsafe.Pointer)(unsafe.Pointer(p))[1]
}

// onSubmittedWorkDone calls f from a later Poll or Submit once the work
// submitted so far has finished.
func onSubmittedWorkDone(q *wgpu.Queue, f func(wgpu.QueueWorkDoneStatus)) {
	h := cgo.NewHandle(func(s uint32) { f(wgpu.QueueWorkDoneStatus(s)) })
	C.tesseraOnSubmittedWorkDone(C.tesseraQueue(rawHandle(q)), C.uintptr_t(h))
}

// mapAsync maps b for reading or writing and calls f from a later Poll.
func mapAsync(b *wgpu.Buffer, mode wgpu.MapMode, offset, size uint64, f func(wgpu.BufferMapAsyncStatus)) {
	h := cgo.NewHandle(func(s uint32) { f(wgpu.BufferMapAsyncStatus(s)) })
	C.tesseraMapAsync(C.tesseraBuffer(rawHandle(b)), C.uint32_t(mode), C.size_t(offset), C.size_t(size), C.uintptr_t(h))
}
