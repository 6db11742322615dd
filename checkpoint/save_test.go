package checkpoint

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

// sample returns tensors of every dtype and some awkward layouts: a
// transposed and a strided view, a 0-d scalar, an empty tensor.
func sample(dev tensor.Device) map[string]*tensor.Tensor {
	on := tensor.On(dev)
	base := tensor.From([]float32{1, -2, 3.5, float32(math.Inf(-1)), float32(math.NaN()), 1e-40, 7, 8, 9, 10, 11, 12}, []int{3, 4}, on)
	m := map[string]*tensor.Tensor{
		"layers.0.weight": base,
		"layers.0.t":      base.T(),
		"layers.1.step2":  base.Slice(1, 0, 4, 2),
		"idx":             tensor.From([]int32{math.MinInt32, -1, 0, 7, math.MaxInt32}, []int{5}, on),
		"mask":            tensor.From([]bool{true, false, false, true, true, false}, []int{2, 3}, on),
		"scalar":          tensor.From([]float32{2.5}, []int{}, on),
		"empty":           tensor.Zeros([]int{0, 3}, on),
	}
	if dev == tensor.CPU {
		m["f64"] = tensor.New([]float64{math.Pi, -0.0, math.SmallestNonzeroFloat64}, 3)
	}
	return m
}

// sameTensor fails unless got has want's shape, dtype and bits.
func sameTensor(t *testing.T, name string, got, want *tensor.Tensor) {
	t.Helper()
	if !slices.Equal(got.Shape(), want.Shape()) || got.DType() != want.DType() {
		t.Fatalf("%s: got %v %v, want %v %v", name, got.Shape(), got.DType(), want.Shape(), want.DType())
	}
	var g, w bytes.Buffer
	if err := writeTensor(&g, got); err != nil {
		t.Fatal(err)
	}
	if err := writeTensor(&w, want); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(g.Bytes(), w.Bytes()) {
		t.Fatalf("%s: got %v, want %v", name, got, want)
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	for _, from := range devtest.Devices(t) {
		for _, to := range devtest.Devices(t) {
			t.Run(from.String()+"→"+to.String(), func(t *testing.T) {
				p := filepath.Join(t.TempDir(), "c.safetensors")
				want := sample(from)
				meta := map[string]string{"step": "12", "note": "ü \"quoted\" <tag>"}
				if err := Save(p, want, meta); err != nil {
					t.Fatal(err)
				}
				if _, ok := want["f64"]; ok && to.Kind == tensor.KindGPU {
					_, err := Load(p, On(to))
					if !errors.Is(err, tensor.ErrDType) || !strings.Contains(err.Error(), `tensor "f64": F64 cannot load onto gpu`) {
						t.Fatalf("loading F64 onto %v: %v", to, err)
					}
					delete(want, "f64")
					if err := Save(p, want, meta); err != nil {
						t.Fatal(err)
					}
				}
				f, err := Load(p, On(to))
				if err != nil {
					t.Fatal(err)
				}
				defer f.Release()
				if !reflect.DeepEqual(f.Meta, meta) || len(f.Tensors) != len(want) {
					t.Fatalf("loaded %v with meta %v, want %d tensors and %v", f.Names(), f.Meta, len(want), meta)
				}
				for name, w := range want {
					g := f.Tensors[name]
					if g == nil || g.Device() != to || !g.IsContiguous() {
						t.Fatalf("%s: loaded %v", name, g)
					}
					sameTensor(t, name, g, w)
				}
			})
		}
	}
}

// TestSaveLayout checks the bytes Save writes: the header is padded to 8
// bytes, tensors are ordered by element size then name so each is
// aligned, and the same input gives the same bytes.
func TestSaveLayout(t *testing.T) {
	dir := t.TempDir()
	ts := sample(tensor.CPU)
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := Save(a, ts, nil); err != nil {
		t.Fatal(err)
	}
	if err := Save(b, ts, nil); err != nil {
		t.Fatal(err)
	}
	ab, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	if !bytes.Equal(ab, bb) {
		t.Fatal("saving the same tensors twice gave different bytes")
	}
	n := binary.LittleEndian.Uint64(ab)
	if n%8 != 0 {
		t.Errorf("header length %d is not a multiple of 8", n)
	}
	var hdr map[string]struct {
		DType   string `json:"dtype"`
		Offsets []int  `json:"data_offsets"`
	}
	if err := json.Unmarshal(ab[8:8+n], &hdr); err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Meta map[string]string `json:"__metadata__"`
	}
	if err := json.Unmarshal(ab[8:8+n], &meta); err != nil || len(meta.Meta) != 1 || !strings.HasPrefix(meta.Meta[MetaChecksum], "crc32c:") {
		t.Errorf("nil metadata wrote the metadata %v (%v), want only %s", meta.Meta, err, MetaChecksum)
	}
	delete(hdr, metaKey)
	if o := hdr["f64"].Offsets; o[0] != 0 {
		t.Errorf("the F64 tensor starts at %d, want 0 (larger elements first)", o[0])
	}
	for name, e := range hdr {
		if size := fileDTypes[e.DType].size; e.Offsets[0]%size != 0 {
			t.Errorf("%s (%s) starts at %d, not aligned", name, e.DType, e.Offsets[0])
		}
	}
}

func TestSaveRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	x := tensor.Ones([]int{2})
	released := tensor.Ones([]int{2})
	released.Release()
	for _, c := range []struct {
		name    string
		tensors map[string]*tensor.Tensor
		meta    map[string]string
		kind    error
		says    string
	}{
		{"empty name", map[string]*tensor.Tensor{"": x}, nil, tensor.ErrArgument, `invalid tensor name ""`},
		{"reserved name", map[string]*tensor.Tensor{metaKey: x}, nil, tensor.ErrArgument, "__metadata__"},
		{"bad UTF-8 name", map[string]*tensor.Tensor{"a\xff": x}, nil, tensor.ErrArgument, "not UTF-8"},
		{"nil tensor", map[string]*tensor.Tensor{"w": nil}, nil, tensor.ErrArgument, `tensor "w" is nil`},
		{"bad UTF-8 metadata", map[string]*tensor.Tensor{"w": x}, map[string]string{"k": "\xfe"}, tensor.ErrArgument, `metadata key "k"`},
		{"released tensor", map[string]*tensor.Tensor{"w": released}, nil, tensor.ErrReleased, `tensor "w"`},
		{"checksum in metadata", map[string]*tensor.Tensor{"w": x}, map[string]string{MetaChecksum: "crc32c:0"}, tensor.ErrArgument,
			`metadata key "tessera.checksum" is the checksum Save writes itself`},
	} {
		p := filepath.Join(dir, "x.safetensors")
		err := Save(p, c.tensors, c.meta)
		var fe *FileError
		if !errors.As(err, &fe) || !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.says) ||
			!strings.HasPrefix(err.Error(), "checkpoint.Save "+p+": ") {
			t.Errorf("%s: got %v, want a *FileError wrapping %v that says %q", c.name, err, c.kind, c.says)
		}
		if l := dirNames(t, dir); len(l) != 0 {
			t.Errorf("%s: left files %v", c.name, l)
		}
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// failAfter is a writer that accepts n bytes, then fails.
type failAfter struct {
	w io.Writer
	n int
}

var errInjected = errors.New("injected write failure")

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k, _ := f.w.Write(p[:f.n])
		f.n = 0
		return k, errInjected
	}
	f.n -= len(p)
	return f.w.Write(p)
}

// TestSaveFailureKeepsOldCheckpoint fails the write of a new checkpoint
// after every interesting number of bytes (in the length, the header,
// the data, one short of the end) and checks each time that the
// previous checkpoint still loads whole and no temporary file remains.
func TestSaveFailureKeepsOldCheckpoint(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "ckpt.safetensors")
	old := map[string]*tensor.Tensor{"w": tensor.New([]float32{1, 2, 3}, 3)}
	if err := Save(p, old, map[string]string{"step": "1"}); err != nil {
		t.Fatal(err)
	}
	next := sample(tensor.CPU)
	l, err := plan(next, nil)
	if err != nil {
		t.Fatal(err)
	}
	hdr := l.header
	var full bytes.Buffer
	if err := encodeTo(&full, next, nil); err != nil {
		t.Fatal(err)
	}
	total := full.Len()
	defer func() { testWriter = nil }()
	for _, n := range []int{0, 3, 8, 8 + len(hdr)/2, 8 + len(hdr), 8 + len(hdr) + 5, total - 1} {
		testWriter = func(w io.Writer) io.Writer { return &failAfter{w, n} }
		err := Save(p, next, nil)
		if !errors.Is(err, errInjected) || !strings.HasPrefix(err.Error(), "checkpoint.Save "+p) {
			t.Fatalf("failing after %d of %d bytes: Save returned %v", n, total, err)
		}
		f, err := Load(p)
		if err != nil {
			t.Fatalf("failing after %d bytes broke the old checkpoint: %v", n, err)
		}
		sameTensor(t, "w", f.Tensors["w"], old["w"])
		if f.Meta["step"] != "1" || len(f.Tensors) != 1 {
			t.Fatalf("failing after %d bytes: old checkpoint now %v %v", n, f.Names(), f.Meta)
		}
		if l := dirNames(t, dir); !slices.Equal(l, []string{"ckpt.safetensors"}) {
			t.Fatalf("failing after %d bytes left %v", n, l)
		}
	}
	testWriter = func(w io.Writer) io.Writer { return &failAfter{w, total} }
	if err := Save(p, next, nil); err != nil {
		t.Fatalf("a writer that takes every byte: %v", err)
	}
	if b, _ := os.ReadFile(p); !bytes.Equal(b, full.Bytes()) {
		t.Fatal("the new checkpoint is not what encode writes")
	}
}

// encodeTo writes tensors and meta to b as Save writes them to a file.
func encodeTo(b *bytes.Buffer, tensors map[string]*tensor.Tensor, meta map[string]string) error {
	l, err := plan(tensors, meta)
	if err != nil {
		return err
	}
	start := b.Len()
	sum, err := encode(b, l)
	if err != nil {
		return err
	}
	copy(b.Bytes()[start+int(l.sumAt):], sum)
	return nil
}
