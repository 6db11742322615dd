package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

// raw returns a file of header h (its length as written) and data.
func raw(h string, data ...byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	return append(append(b, h...), data...)
}

// le returns the little-endian bytes of vs (uint16, uint32, uint64,
// int64 or float32 values).
func le(vs ...any) []byte {
	var b bytes.Buffer
	for _, v := range vs {
		binary.Write(&b, binary.LittleEndian, v)
	}
	return b.Bytes()
}

const f32x2 = `{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`

// malformed lists files that are not valid safetensors, and what the
// error must say.
var malformed = []struct {
	name string
	file []byte
	says string
}{
	{"empty file", nil, "truncated: want 8 bytes, have 0 (too short for the 8-byte header length)"},
	{"7 bytes", []byte{1, 0, 0, 0, 0, 0, 0}, "truncated: want 8 bytes, have 7"},
	{"header length past the end", raw(f32x2)[:30], "truncated: want 62 bytes, have 30 (the header length 54 runs past the end of the 30-byte file)"},
	{"huge header length", append(le(uint64(math.MaxUint64)), "{}"...), "header length 18446744073709551615 runs past the end"},
	{"empty header", raw(""), "invalid JSON in the header: it ends early"},
	{"invalid JSON", raw(`{"a":{"dtype":"F32",`), `invalid JSON in tensor "a": it ends early`},
	{"bad JSON syntax", raw(`{"a" 1}`), `invalid JSON in tensor "a": invalid character '1' after object key`},
	{"not UTF-8", raw("{\"\xff\":1}"), "not valid UTF-8"},
	{"top level array", raw(`[1,2]`), "the header is an array, not a JSON object"},
	{"top level null", raw(`null`), "the header is null, not a JSON object"},
	{"text after the object", raw(`{} x`), "2 bytes after its JSON object"},
	{"second object", raw(`{}{}`), "2 bytes after its JSON object"},
	{"tensor not an object", raw(`{"a":[1]}`), `tensor "a" is an array, not a JSON object`},
	{"unknown dtype", raw(`{"a":{"dtype":"F33","shape":[],"data_offsets":[0,4]}}`, le(float32(1))...), `tensor "a": unknown dtype "F33"`},
	{"dtype not a string", raw(`{"a":{"dtype":4,"shape":[],"data_offsets":[0,4]}}`), `tensor "a": dtype is the number 4, not a string`},
	{"missing field", raw(`{"a":{"dtype":"F32","shape":[]}}`), `tensor "a" lacks dtype, shape or data_offsets`},
	{"unknown field", raw(`{"a":{"dtype":"F32","shape":[],"data_offsets":[0,4],"strides":[]}}`), `tensor "a": unknown field "strides"`},
	{"field twice", raw(`{"a":{"dtype":"F32","dtype":"F64","shape":[],"data_offsets":[0,4]}}`), `tensor "a" gives "dtype" twice`},
	{"shape not an array", raw(`{"a":{"dtype":"F32","shape":3,"data_offsets":[0,4]}}`), "shape is the number 3, not an array"},
	{"negative dimension", raw(`{"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}`), "shape holds -2, not a non-negative integer"},
	{"fractional dimension", raw(`{"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,8]}}`), "shape holds 1.5, not a non-negative integer"},
	{"dimension past int64", raw(`{"a":{"dtype":"F32","shape":[0,9223372036854775808],"data_offsets":[0,0]}}`), "shape holds 9223372036854775808"},
	{"dimension a string", raw(`{"a":{"dtype":"F32","shape":["2"],"data_offsets":[0,8]}}`), `shape holds "2", not a number`},
	{"overflowing shape", raw(`{"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}}`), "shape [4294967296 4294967296] of F32 overflows"},
	{"overflowing bytes", raw(`{"a":{"dtype":"F64","shape":[4611686018427387904],"data_offsets":[0,0]}}`), "overflows"},
	{"three offsets", raw(`{"a":{"dtype":"F32","shape":[],"data_offsets":[0,4,8]}}`), "data_offsets has 3 numbers, not 2"},
	{"offsets backwards", raw(`{"a":{"dtype":"F32","shape":[],"data_offsets":[4,0]}}`, le(float32(1))...), "data_offsets [4, 0] end before they begin"},
	{"size mismatch", raw(`{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, le(float32(1), float32(2))...), `tensor "a": shape [3] of F32 needs 12 bytes but data_offsets [0, 8] hold 8`},
	{"truncated data", raw(f32x2, le(float32(1))...), `truncated: want 70 bytes, have 66 (tensor "a": data_offsets [0, 8] run past the 4 bytes of data)`},
	{"offset out of range", raw(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[996,1000]}}`, le(float32(1))...), "truncated: want 1067 bytes, have 71 ("},
	{"trailing data", raw(f32x2, le(float32(1), float32(2), float32(3))...), "4 bytes of trailing data after the last tensor"},
	{"only trailing data", raw(`{}`, 0), "1 bytes of trailing data after the last tensor (the tensors end at 0 of 1)"},
	{"overlap", raw(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, le(float32(1), float32(2))...),
		`tensor "b" (bytes 4 to 8) overlaps tensor "a" (bytes 0 to 8)`},
	{"same range twice", raw(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}}`, le(float32(1))...),
		"overlaps"},
	{"gap", raw(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, le(float32(1), float32(2))...), `bytes 0 to 4 of the data belong to no tensor (before tensor "a")`},
	{"name twice", raw(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, le(float32(1))...),
		`the header gives "a" twice`},
	{"metadata twice", raw(`{"__metadata__":{},"__metadata__":{}}`), `gives "__metadata__" twice`},
	{"metadata key twice", raw(`{"__metadata__":{"k":"1","k":"2"}}`), `"__metadata__" gives "k" twice`},
	{"metadata value a number", raw(`{"__metadata__":{"step":12}}`), `the value of "step" is the number 12, not a string`},
	{"metadata an array", raw(`{"__metadata__":["a"]}`), `"__metadata__" is an array, not a JSON object`},
	{"bool byte 2", raw(`{"m":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}}`, 1, 0, 2), `tensor "m": BOOL element 2 is the byte 2, not 0 or 1`},
}

func TestLoadRejectsMalformedFiles(t *testing.T) {
	dir := t.TempDir()
	for i, c := range malformed {
		p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_"))
		if err := os.WriteFile(p, c.file, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := Load(p)
		var fe *FileError
		if f != nil || !errors.As(err, &fe) || !errors.Is(err, ErrFormat) ||
			!strings.HasPrefix(err.Error(), "checkpoint.Load "+p+": ") || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%d %s: Load returned %v, %v; want an ErrFormat *FileError naming the file that says %q", i, c.name, f, err, c.says)
		}
	}
}

// hugeFile reads as zeros except for its first bytes, and is as long as
// it says.
type hugeFile struct {
	head []byte
	size int64
}

func (h hugeFile) ReadAt(p []byte, off int64) (int, error) {
	clear(p)
	if off < int64(len(h.head)) {
		copy(p, h.head[off:])
	}
	return len(p), nil
}

func TestLoadLimitsTheHeaderBeforeAllocating(t *testing.T) {
	f := hugeFile{le(uint64(1 << 40)), 1<<40 + 100}
	_, err := decode(f, f.size, nil)
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "header length 1099511627776 exceeds the limit of 100000000 bytes") {
		t.Fatalf("a 1 TiB header: %v", err)
	}
}

func TestLoadAcceptsEdgeCases(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name  string
		file  []byte
		names []string
		meta  map[string]string
	}{
		{"no tensors", raw(`{}`), nil, map[string]string{}},
		{"padded header", raw(`{}      `), nil, map[string]string{}},
		{"null metadata", raw(`{"__metadata__":null}`), nil, map[string]string{}},
		{"metadata only", raw(`{"__metadata__":{"format":"pt"}}`), nil, map[string]string{"format": "pt"}},
		{"offsets out of name order", raw(`{"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]},"a":{"data_offsets":[0,4],"shape":[],"dtype":"I32"}}`,
			le(int32(1), float32(2))...), []string{"a", "b"}, map[string]string{}},
		{"zero-size tensors anywhere", raw(`{"z":{"dtype":"F64","shape":[0,5],"data_offsets":[4,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"y":{"dtype":"BOOL","shape":[0],"data_offsets":[0,0]}}`,
			le(float32(1))...), []string{"a", "y", "z"}, map[string]string{}},
	} {
		p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_"))
		if err := os.WriteFile(p, c.file, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := Load(p)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !slices.Equal(f.Names(), c.names) || len(f.Meta) != len(c.meta) || f.Meta["format"] != c.meta["format"] {
			t.Errorf("%s: loaded %v %v, want %v %v", c.name, f.Names(), f.Meta, c.names, c.meta)
		}
	}
}

// TestLoadPyTorchDTypes reads the dtypes PyTorch writes that Tessera
// holds otherwise: I64 into Int32, F16 and BF16 into Float32, exactly.
func TestLoadPyTorchDTypes(t *testing.T) {
	h := `{"i":{"dtype":"I64","shape":[3],"data_offsets":[0,24]},` +
		`"h":{"dtype":"F16","shape":[8],"data_offsets":[24,40]},` +
		`"b":{"dtype":"BF16","shape":[4],"data_offsets":[40,48]}}`
	data := le(int64(math.MinInt32), int64(-1), int64(math.MaxInt32),
		// 1, -2, 65504 (max), 2^-24 (smallest subnormal), 2^-14 (smallest normal), -0, +inf, NaN
		uint16(0x3c00), uint16(0xc000), uint16(0x7bff), uint16(0x0001), uint16(0x0400), uint16(0x8000), uint16(0x7c00), uint16(0x7e00),
		// 1, -3.140625, 1e38-ish, smallest bf16 subnormal
		uint16(0x3f80), uint16(0xc049), uint16(0x7e96), uint16(0x0001))
	p := filepath.Join(t.TempDir(), "torch.safetensors")
	if err := os.WriteFile(p, raw(h, data...), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dev := range devtest.Devices(t) {
		f, err := Load(p, On(dev))
		if err != nil {
			t.Fatal(err)
		}
		if i := f.Tensors["i"]; i.DType() != tensor.Int32 || !slices.Equal(i.Int32s(), []int32{math.MinInt32, -1, math.MaxInt32}) {
			t.Errorf("I64 loaded as %v", i)
		}
		half := f.Tensors["h"].Float32s()
		want := []float32{1, -2, 65504, 0x1p-24, 0x1p-14, float32(math.Copysign(0, -1)), float32(math.Inf(1))}
		for k, w := range want {
			if math.Float32bits(half[k]) != math.Float32bits(w) {
				t.Errorf("F16 element %d is %g (%#x), want %g", k, half[k], math.Float32bits(half[k]), w)
			}
		}
		if !math.IsNaN(float64(half[7])) {
			t.Errorf("F16 NaN loaded as %g", half[7])
		}
		bf := f.Tensors["b"].Float32s()
		for k, bits := range []uint32{0x3f800000, 0xc0490000, 0x7e960000, 0x00010000} {
			if math.Float32bits(bf[k]) != bits {
				t.Errorf("BF16 element %d is %#x, want %#x", k, math.Float32bits(bf[k]), bits)
			}
		}
	}
}

func TestLoadRefusesWhatTesseraCannotHold(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		file []byte
		says string
	}{
		{"I64 past int32", raw(`{"i":{"dtype":"I64","shape":[2],"data_offsets":[0,16]}}`, le(int64(5), int64(1<<31))...),
			`tensor "i": I64 element 1 is 2147483648, outside int32`},
		{"U8", raw(`{"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]},"u":{"dtype":"U8","shape":[2],"data_offsets":[4,6]}}`, 0, 0, 0, 0, 1, 2),
			`tensor "u": dtype U8 is not one Tessera reads`},
		{"F8", raw(`{"u":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]}}`, 1), "dtype F8_E4M3 is not one Tessera reads"},
	} {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, c.file, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := Load(p)
		if f != nil || !errors.Is(err, tensor.ErrDType) || errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: Load returned %v, %v; want a tensor.ErrDType error that says %q", c.name, f, err, c.says)
		}
	}
	_, err := Load(filepath.Join(dir, "missing"))
	if !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "checkpoint.Load "+dir) {
		t.Errorf("a missing file: %v", err)
	}
}

// TestLoadReleasesOnFailure loads onto the GPU a file whose second
// tensor is corrupt and checks that the first one's memory is given back.
func TestLoadReleasesOnFailure(t *testing.T) {
	dev, ok := devtest.GPU(t)
	if !ok {
		t.Skip("counting allocated memory needs a GPU")
	}
	g, err := tensor.GPUDevice(dev)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "f")
	h := `{"a":{"dtype":"F32","shape":[65536],"data_offsets":[0,262144]},"m":{"dtype":"BOOL","shape":[1],"data_offsets":[262144,262145]}}`
	if err := os.WriteFile(p, raw(h, append(make([]byte, 1<<18), 7)...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := tensor.Sync(dev); err != nil {
		t.Fatal(err)
	}
	before := g.Stats().Allocated
	f, err := Load(p, On(dev))
	if f != nil || !errors.Is(err, ErrFormat) {
		t.Fatalf("Load returned %v, %v", f, err)
	}
	if err := tensor.Sync(dev); err != nil {
		t.Fatal(err)
	}
	if after := g.Stats().Allocated; after > before {
		t.Errorf("a failed Load left %d bytes allocated on %v", after-before, dev)
	}
}
