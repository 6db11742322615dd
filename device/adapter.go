//go:build cgo

package device

import (
	"fmt"
	"strings"
	"sync"

	"github.com/rajveermalviya/go-webgpu/wgpu"
)

// adapterList is the process-wide adapter enumeration, done once on first
// use (never in init: creating an instance loads Vulkan drivers).
var adapterList struct {
	once     sync.Once
	instance *wgpu.Instance
	infos    []AdapterInfo
	adapters []*wgpu.Adapter
	err      error
}

// backendOrder lists the backends in order of preference. The GL backend
// is never used: wgpu's GL compute support is the weakest, on Linux it lists
// the Vulkan devices again (llvmpipe twice), and creating a GL instance on a
// machine whose libEGL has no vendor aborts the process (a Rust panic in
// wgpu-hal 0.17's egl.rs, observed with __EGL_VENDOR_LIBRARY_FILENAMES
// pointing nowhere) — which no Go code can recover from.
var backendOrder = []wgpu.InstanceBackend{
	wgpu.InstanceBackend_Vulkan,
	wgpu.InstanceBackend_Metal,
	wgpu.InstanceBackend_DX12,
}

// Adapters enumerates the adapters once (cached), preferring the Vulkan
// backend and dropping adapters that a less preferred backend reports again
// for a device already listed (same name): DX12 after Vulkan on Windows. The
// GL backend is not used (see backendOrder). Index N is "gpu:N".
func Adapters() ([]AdapterInfo, error) {
	l := &adapterList
	l.once.Do(enumerateAdapters)
	if l.err != nil {
		return nil, l.err
	}
	return append([]AdapterInfo(nil), l.infos...), nil
}

func enumerateAdapters() {
	l := &adapterList
	defer func() {
		if r := recover(); r != nil {
			l.err = fmt.Errorf("tessera: enumerating GPU adapters failed: %v", r)
		}
	}()
	// Primary = Vulkan | Metal | DX12 (| browser WebGPU): no GL, whose
	// instance creation alone opens EGL (see backendOrder).
	l.instance = wgpu.CreateInstance(&wgpu.InstanceDescriptor{Backends: wgpu.InstanceBackend_Primary})
	var infos []AdapterInfo
	var adapters []*wgpu.Adapter
	for _, backend := range backendOrder {
		// One backend at a time, so the list is in preference order.
		for _, a := range l.instance.EnumerateAdapters(&wgpu.InstanceEnumerateAdapterOptons{Backends: backend}) {
			infos = append(infos, adapterInfo(a.GetProperties()))
			adapters = append(adapters, a)
		}
	}
	keep := dedupeAdapters(infos)
	for i, a := range adapters {
		if !keep[i] {
			a.Release()
			continue
		}
		info := infos[i]
		info.Index = len(l.infos)
		l.infos = append(l.infos, info)
		l.adapters = append(l.adapters, a)
	}
}

func adapterInfo(p wgpu.AdapterProperties) AdapterInfo {
	info := AdapterInfo{Name: p.Name, Driver: p.DriverDescription}
	switch p.BackendType {
	case wgpu.BackendType_Vulkan:
		info.Backend = "vulkan"
	case wgpu.BackendType_Metal:
		info.Backend = "metal"
	case wgpu.BackendType_D3D12:
		info.Backend = "dx12"
	case wgpu.BackendType_D3D11:
		info.Backend = "dx11"
	case wgpu.BackendType_OpenGL, wgpu.BackendType_OpenGLES:
		info.Backend = "gl"
	default:
		info.Backend = strings.ToLower(p.BackendType.String())
	}
	switch p.AdapterType {
	case wgpu.AdapterType_DiscreteGPU:
		info.Type = "discrete"
	case wgpu.AdapterType_IntegratedGPU:
		info.Type = "integrated"
	case wgpu.AdapterType_CPU:
		info.Type = "cpu"
	default:
		info.Type = "unknown"
	}
	name := strings.ToLower(p.Name + " " + p.DriverDescription)
	info.IsCPU = p.AdapterType == wgpu.AdapterType_CPU
	for _, sw := range []string{"llvmpipe", "lavapipe", "swiftshader", "softpipe", "microsoft basic render"} {
		if strings.Contains(name, sw) {
			info.IsCPU = true
		}
	}
	return info
}
