package checkpoint

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/tensor"
)

// The files in testdata/torch were written by PyTorch 1.13 through
// tools/safetensors/reader.py, so that these tests need no PyTorch:
//
//	reader.py dtypes testdata/torch/dtypes.safetensors
//	reader.py export testdata/torch/mlp.safetensors testdata/torch/mlp_io.safetensors 5,7,3 0
const torchData = "testdata/torch"

func newMLP(seed uint64, dev tensor.Device) *nn.Sequential {
	m := nn.NewMLP([]int{5, 7, 3}, (*tensor.Tensor).ReLU, tensor.WithGenerator(tensor.NewGenerator(seed)))
	nn.To(m, dev)
	return m
}

// requireSameTensor fails unless got and want have one shape and agree
// within float32 tolerance.
func requireSameTensor(t *testing.T, what string, got, want *tensor.Tensor) {
	t.Helper()
	if !slices.Equal(got.Shape(), want.Shape()) {
		t.Fatalf("%s: shape %v, want %v", what, got.Shape(), want.Shape())
	}
	approx.Require(t, what, got.Float32s(), want.Float32s(), approx.AbsRel(1e-5, 1e-5))
}

// checkTorchMLP loads a torch MLP's state dict into a Tessera MLP on
// each device, strictly, and compares the outputs on torch's input.
func checkTorchMLP(t *testing.T, model, io string) {
	for _, dev := range devtest.Devices(t) {
		f, err := Load(model)
		if err != nil {
			t.Fatal(err)
		}
		if f.Meta["format"] != "pt" {
			t.Errorf("metadata %v, want format pt", f.Meta)
		}
		m := newMLP(99, dev)
		keys, err := LoadInto(f, nn.StateDict(m), true)
		if err != nil || keys.Missing != nil || keys.Unexpected != nil {
			t.Fatalf("LoadInto: %v %v", keys, err)
		}
		for name, p := range nn.StateDict(m) {
			sameTensor(t, name, p, f.Tensors[name])
			if !p.RequiresGrad() || p.Device() != dev {
				t.Errorf("%s is now %v", name, p)
			}
		}
		xy, err := Load(io, On(dev))
		if err != nil {
			t.Fatal(err)
		}
		requireSameTensor(t, "forward on "+dev.String(), m.Forward(xy.Tensors["x"]), xy.Tensors["y"])
	}
}

// checkTorchDTypes checks a file of reader.py's dtypes command: each
// tensor of a dtype Tessera converts equals its float32 or int32 twin
// that PyTorch computed.
func checkTorchDTypes(t *testing.T, path string) {
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][2]string{{"i64", "i64_as_i32"}, {"f16", "f16_as_f32"}, {"bf16", "bf16_as_f32"}} {
		sameTensor(t, pair[0], f.Tensors[pair[0]], f.Tensors[pair[1]])
	}
	for name, want := range map[string]tensor.DType{"f64": tensor.Float64, "bool": tensor.Bool, "scalar": tensor.Float32, "empty": tensor.Float32} {
		if g := f.Tensors[name]; g == nil || g.DType() != want {
			t.Errorf("%s loaded as %v, want %v", name, g, want)
		}
	}
	if s := f.Tensors["scalar"]; s.Dim() != 0 || s.Item() != 2.5 {
		t.Errorf("scalar loaded as %v", s)
	}
}

func TestTorchWrittenFiles(t *testing.T) {
	checkTorchMLP(t, filepath.Join(torchData, "mlp.safetensors"), filepath.Join(torchData, "mlp_io.safetensors"))
	checkTorchDTypes(t, filepath.Join(torchData, "dtypes.safetensors"))
}

// reader runs tools/safetensors/reader.py under /usr/bin/python3
// (Debian's, with torch) in one process, with its commands separated by
// "+", or skips the test saying why it cannot.
func reader(t *testing.T, args ...string) {
	t.Helper()
	const py = "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Skipf("PyTorch interop needs Debian's python3-torch: %v", err)
	}
	out, err := exec.Command(py, append([]string{"../tools/safetensors/reader.py"}, args...)...).CombinedOutput()
	if err != nil && strings.Contains(string(out), "No module named 'torch'") {
		t.Skipf("PyTorch interop needs Debian's python3-torch: %s cannot import torch", py)
	}
	if err != nil {
		t.Fatalf("reader.py %v: %v\n%s", args, err, out)
	}
}

// TestTorchReadsTessera saves a Tessera MLP's weights and an input from
// each device, has PyTorch load them into nn.Sequential(Linear, ReLU,
// Linear) and run it, and compares PyTorch's output with Tessera's; and
// has PyTorch copy a file of every dtype and layout, checked bit for bit.
func TestTorchReadsTessera(t *testing.T) {
	dir := t.TempDir()
	var args []string
	type run struct {
		dev  tensor.Device
		want *tensor.Tensor
		out  string
	}
	var runs []run
	for _, dev := range devtest.Devices(t) {
		m := newMLP(7, dev)
		x := tensor.Randn([]int{4, 5}, tensor.WithGenerator(tensor.NewGenerator(8)), tensor.On(dev))
		model, in, out := filepath.Join(dir, "model-"+dev.String()), filepath.Join(dir, "in-"+dev.String()), filepath.Join(dir, "out-"+dev.String())
		if err := Save(model, nn.StateDict(m), map[string]string{"step": "0"}); err != nil {
			t.Fatal(err)
		}
		if err := Save(in, map[string]*tensor.Tensor{"x": x}, nil); err != nil {
			t.Fatal(err)
		}
		args = append(args, "forward", model, in, out, "+")
		runs = append(runs, run{dev, m.Forward(x), out})
	}
	src, cp := filepath.Join(dir, "src"), filepath.Join(dir, "copy")
	want, meta := sample(tensor.CPU), map[string]string{"note": "ü"}
	if err := Save(src, want, meta); err != nil {
		t.Fatal(err)
	}
	reader(t, append(args, "copy", src, cp)...)
	for _, r := range runs {
		y, err := Load(r.out, On(r.dev))
		if err != nil {
			t.Fatal(err)
		}
		requireSameTensor(t, "PyTorch's forward of Tessera's weights from "+r.dev.String(), y.Tensors["y"], r.want)
	}
	f, err := Load(cp)
	if err != nil {
		t.Fatal(err)
	}
	if f.Meta["note"] != "ü" || len(f.Tensors) != len(want) {
		t.Fatalf("PyTorch's copy holds %v %v", f.Names(), f.Meta)
	}
	for name, w := range want {
		sameTensor(t, name, f.Tensors[name], w)
	}
}

// TestTorchWritesTessera has PyTorch write a seeded MLP's state dict,
// its input and output, and a tensor of each dtype it writes, and checks
// them as TestTorchWrittenFiles checks the committed ones.
func TestTorchWritesTessera(t *testing.T) {
	dir := t.TempDir()
	model, io, dt := filepath.Join(dir, "mlp"), filepath.Join(dir, "io"), filepath.Join(dir, "dtypes")
	reader(t, "export", model, io, "5,7,3", "3", "+", "dtypes", dt)
	checkTorchMLP(t, model, io)
	checkTorchDTypes(t, dt)
}
