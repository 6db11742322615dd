//go:build cgo

package device

import (
	"fmt"
	"os"
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
//
// On a machine without a desktop session, enumeration points
// XDG_RUNTIME_DIR at a private empty directory while it runs, when the
// variable is unset or not an absolute path, and restores it afterwards, so
// that Mesa's Vulkan device-selection layer prints nothing to stderr (see
// quietWaylandProbe).
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
	defer quietWaylandProbe()()
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

// runtimeDirEnv is the XDG base-directory variable that libwayland-client
// needs to find a compositor socket.
const runtimeDirEnv = "XDG_RUNTIME_DIR"

// quietWaylandProbe prepares the environment for adapter enumeration and
// returns the function that restores it.
//
// Mesa installs an implicit Vulkan layer, VK_LAYER_MESA_device_select,
// in front of every Vulkan driver. When the instance enables
// VK_KHR_wayland_surface (wgpu enables every surface extension) the layer
// asks the Wayland compositor which GPU drives the display, on each
// vkEnumeratePhysicalDevices; libwayland-client then prints "error:
// XDG_RUNTIME_DIR is invalid or not set in the environment." to stderr
// each time (four lines per process) when XDG_RUNTIME_DIR is unset or not
// an absolute path — on every headless server, container and CI runner —
// and the layer falls back to its default order.
//
// In that case, and only then, XDG_RUNTIME_DIR points at a fresh empty
// directory (0700, owned by the user, from os.MkdirTemp) while the
// instance is created and the adapters are enumerated. libwayland finds no
// compositor socket there and fails quietly; the layer takes the same
// fallback as before, so the adapter order does not change, and no other
// process can plant a socket in the directory. The variable is restored
// (unset, or its invalid value) and the directory removed as soon as
// enumeration ends, so child processes and other libraries never see it;
// enumeration runs once per process, and only a concurrent reader of the
// variable during that moment could. A valid XDG_RUNTIME_DIR (a desktop
// session) is left alone. Redirecting stderr instead would also hide
// Tessera's and the driver's real errors, and those of other goroutines;
// disabling the layer (NODEVICE_SELECT=1) would change the adapter order
// on multi-GPU machines.
func quietWaylandProbe() (restore func()) {
	old, set := os.LookupEnv(runtimeDirEnv)
	if strings.HasPrefix(old, "/") {
		return func() {}
	}
	dir, err := os.MkdirTemp("", "tessera-xdg-runtime-")
	if err != nil {
		return func() {} // the messages are cosmetic: enumerate anyway
	}
	if err := os.Setenv(runtimeDirEnv, dir); err != nil {
		os.Remove(dir)
		return func() {}
	}
	return func() {
		if set {
			os.Setenv(runtimeDirEnv, old)
		} else {
			os.Unsetenv(runtimeDirEnv)
		}
		os.Remove(dir)
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
