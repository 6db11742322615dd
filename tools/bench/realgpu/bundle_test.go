// Package realgpu holds the build and run scripts of the real-GPU
// benchmark bundle (see README.md); its test builds the bundle and runs
// it on Mesa's lavapipe, as CI does.
package realgpu

import (
	"context"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// lavapipe returns the path of lavapipe's ICD manifest and its driver
// library; without them the test fails under TESSERA_REQUIRE_GPU=1 (CI)
// and is skipped otherwise.
func lavapipe(t *testing.T) (manifest, library string) {
	files, _ := filepath.Glob("/usr/share/vulkan/icd.d/lvp_icd*.json")
	if len(files) == 0 {
		if os.Getenv("TESSERA_REQUIRE_GPU") == "1" {
			t.Fatal("TESSERA_REQUIRE_GPU=1 but lavapipe's ICD is not installed (apt-get install mesa-vulkan-drivers)")
		}
		t.Skip("lavapipe's ICD is not installed (apt-get install mesa-vulkan-drivers)")
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		ICD struct {
			LibraryPath string `json:"library_path"`
		} `json:"ICD"`
	}
	if err := json.Unmarshal(b, &m); err != nil || !filepath.IsAbs(m.ICD.LibraryPath) {
		t.Fatalf("%s: library path %q, %v", files[0], m.ICD.LibraryPath, err)
	}
	return files[0], m.ICD.LibraryPath
}

// script runs a bundle script with bash in dir, with env added to this
// process's environment minus the Vulkan driver variables, and returns
// its exit status, stdout and stderr.
func script(t *testing.T, dir string, env []string, name string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{name}, args...)...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "VK_ICD_FILENAMES=") && !strings.HasPrefix(kv, "VK_DRIVER_FILES=") && !strings.HasPrefix(kv, "PATH=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "PATH="+filepath.Join(runtime.GOROOT(), "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		code = -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
	}
	return code, stdout.String(), stderr.String()
}

// TestBundle builds the bundle, checks what the binary links, runs
// run.sh -quick on lavapipe, and checks how run.sh finds a driver.
func TestBundle(t *testing.T) {
	icd, lib := lavapipe(t)
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bundle := filepath.Join(dir, "bundle")
	if code, out, errOut := script(t, dir, nil, filepath.Join(here, "build.sh"), "-o", bundle); code != 0 {
		t.Fatalf("build.sh: exit status %d\n%s\n%s", code, out, errOut)
	}
	for _, f := range []string{"tessera", "run.sh", "README.md", "GLIBC_REQUIRED", "BUILD_INFO", "../bundle.tar.gz"} {
		if _, err := os.Stat(filepath.Join(bundle, f)); err != nil {
			t.Error(err)
		}
	}
	if debs, _ := filepath.Glob(filepath.Join(bundle, "libvulkan1_*.deb")); len(debs) != 1 {
		t.Errorf("bundle has %d libvulkan1 packages, want 1", len(debs))
	}
	checkBinary(t, bundle)

	t.Run("quick on lavapipe", func(t *testing.T) {
		code, out, errOut := script(t, dir, []string{"VK_ICD_FILENAMES=" + icd}, filepath.Join(bundle, "run.sh"), "-quick", "-progress=false")
		if code != 0 {
			t.Fatalf("run.sh -quick: exit status %d\n%s\n%s", code, out, errOut)
		}
		for _, want := range []string{"| gemm | 64 | tessera | cpu |", "| gemm | 64 | tessera | gpu:0 llvmpipe", "| minchar_step | hidden 100, seq 25, vocab 65 | tessera | gpu:0 llvmpipe"} {
			if !strings.Contains(out, want) {
				t.Errorf("table lacks %q:\n%s", want, out)
			}
		}
		if !strings.Contains(errOut, "Vulkan driver: "+icd) || !strings.Contains(errOut, "Vulkan loader: "+filepath.Join(bundle, "vulkan-loader", "libvulkan.so.1")) {
			t.Errorf("run.sh does not say which driver and loader it uses:\n%s", errOut)
		}
		for _, f := range []string{"results/bench.json", "results/gemm.png", "bundle/vulkan-loader/libvulkan.so.1"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Error(err)
			}
		}
	})

	// Driver discovery in a fake tree, each ending at lavapipe's library.
	fast := []string{"--no-torch", "-workloads", "tiny_op", "-devices", "gpu:0", "-rounds", "1", "-min-time", "1ms", "-progress=false", "-out", filepath.Join(dir, "fast")}
	manifest, err := os.ReadFile(icd)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		files  map[string]string // path under the fake root → manifest text, or "->target" for a symlink
		driver string            // what run.sh must say it uses
	}{
		{"NVIDIA manifest in the container toolkit's folder", map[string]string{"usr/lib/x86_64-linux-gnu/nvidia/current/nvidia_icd.json": string(manifest)}, "ROOT/usr/lib/x86_64-linux-gnu/nvidia/current/nvidia_icd.json"},
		{"NVIDIA manifest in the GPU operator's driver root", map[string]string{"run/nvidia/driver/etc/vulkan/icd.d/nvidia_icd.json": string(manifest)}, "ROOT/run/nvidia/driver/etc/vulkan/icd.d/nvidia_icd.json"},
		{"NVIDIA driver library without a manifest", map[string]string{"usr/lib/x86_64-linux-gnu/libGLX_nvidia.so.0": "->" + lib}, "BUNDLE/icd-libGLX_nvidia.so.0.json"},
		{"software drivers are skipped for another vendor's", map[string]string{"usr/share/vulkan/icd.d/lvp_icd.x86_64.json": "{}", "usr/share/vulkan/icd.d/radeon_icd.x86_64.json": string(manifest)}, "ROOT/usr/share/vulkan/icd.d/radeon_icd.x86_64.json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			for path, text := range c.files {
				p := filepath.Join(root, path)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if target, ok := strings.CutPrefix(text, "->"); ok {
					err = os.Symlink(target, p)
				} else {
					err = os.WriteFile(p, []byte(text), 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			code, out, errOut := script(t, dir, []string{"ICD_SEARCH_ROOT=" + root}, filepath.Join(bundle, "run.sh"), fast...)
			driver := strings.NewReplacer("ROOT", root, "BUNDLE", bundle).Replace(c.driver)
			if code != 0 || !strings.Contains(errOut, "Vulkan driver: "+driver+"\n") || !strings.Contains(out, "| tiny_op | 64 elements, 256 ops | tessera | gpu:0 llvmpipe") {
				t.Errorf("exit status %d, want 0 with driver %s\nstdout:\n%s\nstderr:\n%s", code, driver, out, errOut)
			}
		})
	}
	t.Run("driver given as a library", func(t *testing.T) {
		code, out, errOut := script(t, dir, nil, filepath.Join(bundle, "run.sh"), append([]string{"--icd", lib}, fast...)...)
		if code != 0 || !strings.Contains(errOut, "Vulkan driver: "+filepath.Join(bundle, "icd-"+filepath.Base(lib)+".json")) {
			t.Errorf("--icd %s: exit status %d\n%s\n%s", lib, code, out, errOut)
		}
	})
	t.Run("no adapter", func(t *testing.T) {
		code, _, errOut := script(t, dir, []string{"VK_ICD_FILENAMES=" + filepath.Join(dir, "missing.json")}, filepath.Join(bundle, "run.sh"), fast...)
		if code != 1 || !strings.Contains(errOut, "no Vulkan adapter opened") || !strings.Contains(errOut, "NVIDIA_DRIVER_CAPABILITIES") {
			t.Errorf("exit status %d, want 1 and advice:\n%s", code, errOut)
		}
	})
	t.Run("missing --icd file", func(t *testing.T) {
		code, _, errOut := script(t, dir, nil, filepath.Join(bundle, "run.sh"), "--icd", filepath.Join(dir, "nope.json"))
		if code != 2 || !strings.Contains(errOut, "no such file") {
			t.Errorf("exit status %d, want 2:\n%s", code, errOut)
		}
	})
}

// checkBinary checks that the bundled binary loads nothing but glibc and
// libgcc_s (wgpu-native is linked in, the Vulkan loader opened at run
// time) and that GLIBC_REQUIRED is at least the newest glibc symbol
// version the binary imports.
func checkBinary(t *testing.T, bundle string) {
	t.Helper()
	f, err := elf.Open(filepath.Join(bundle, "tessera"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range libs {
		switch l {
		case "libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "ld-linux-x86-64.so.2", "libgcc_s.so.1":
		default:
			t.Errorf("the binary needs %s (want only glibc and libgcc_s)", l)
		}
	}
	syms, err := f.ImportedSymbols()
	if err != nil {
		t.Fatal(err)
	}
	newest := "0"
	for _, s := range syms {
		if v, ok := strings.CutPrefix(s.Version, "GLIBC_"); ok && versionLess(newest, v) {
			newest = v
		}
	}
	b, err := os.ReadFile(filepath.Join(bundle, "GLIBC_REQUIRED"))
	if err != nil {
		t.Fatal(err)
	}
	if req := strings.TrimSpace(string(b)); newest == "0" || versionLess(req, newest) {
		t.Errorf("GLIBC_REQUIRED says %s, but the binary imports GLIBC_%s", req, newest)
	}
}

// versionLess compares dotted versions numerically (2.9 < 2.34).
func versionLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(as), len(bs)) {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}
