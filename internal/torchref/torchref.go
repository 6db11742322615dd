// Package torchref loads the PyTorch reference vectors stored in
// testdata/torch/*.json (written by tools/torchref/gen.py) so Tessera's tests
// can compare every deterministic op, forward and backward, with PyTorch
// without needing PyTorch at test time.
//
// The file format is described in tools/torchref/README.md. In short, each
// file holds a list of cases; a case names an op, its non-tensor arguments
// (Attrs), its input tensors (each a contiguous BASE tensor plus an optional
// chain of view operations that makes the actual, possibly non-contiguous,
// input), the outputs, the upstream gradients used and the resulting
// gradients with respect to each BASE tensor.
//
// This is a leaf package: standard library only.
package torchref

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/internal/layout"
)

// File is one reference file (one op family).
type File struct {
	Torch        string `json:"torch"`         // torch.__version__ of the generator
	TorchPackage string `json:"torch_package"` // distribution package version, if known
	Generator    string `json:"generator"`     // script that wrote the file
	Family       string `json:"family"`        // elementwise, reduce, linalg, index, nn, shape
	Cases        []Case `json:"cases"`
}

// Case is one reference computation.
type Case struct {
	Name string `json:"name"` // unique within the file, "op/variant..."
	Op   string `json:"op"`   // Tessera method name: "add", "matmul", "cross_entropy", ...
	// Attrs holds the non-tensor arguments as decoded by encoding/json:
	// numbers are float64, lists are []any, null is nil; non-finite floats
	// are the strings "nan", "inf", "-inf". Use the typed accessors.
	Attrs   map[string]any `json:"attrs"`
	Inputs  []Tensor       `json:"inputs"`
	Outputs []Tensor       `json:"outputs"`
	// GradOutputs holds the upstream gradient for each differentiable output;
	// differentiable (floating) outputs always come first, so GradOutputs[i]
	// belongs to Outputs[i]. Empty when no input requires grad.
	GradOutputs []Tensor `json:"grad_outputs"`
	// Grads has one entry per input: d(sum_i sum(Outputs[i]*GradOutputs[i]))
	// with respect to the input's BASE tensor (before its View chain), or nil
	// when the input does not require grad.
	Grads []*Tensor `json:"grads"`
}

// Tensor is a dense tensor. Data is row-major and contiguous over Shape;
// integer and bool values are stored as float64 (bool: 1 true, 0 false).
// For inputs, Data/Shape describe the BASE tensor and View (if any) is the
// chain of view operations applied to it, in order, to form the op's input.
type Tensor struct {
	DType        string    `json:"dtype"` // float32, float64, int32, int64, bool
	Shape        []int     `json:"shape"`
	Data         []float64 `json:"data"`
	View         [][]any   `json:"view,omitempty"`
	RequiresGrad bool      `json:"requires_grad,omitempty"`
}

// UnmarshalJSON decodes a tensor, accepting JSON numbers, the strings
// "nan", "inf", "+inf", "-inf" and the literals true/false in "data".
func (t *Tensor) UnmarshalJSON(b []byte) error {
	var raw struct {
		DType        string            `json:"dtype"`
		Shape        []int             `json:"shape"`
		Data         []json.RawMessage `json:"data"`
		View         [][]any           `json:"view"`
		RequiresGrad bool              `json:"requires_grad"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	data := make([]float64, len(raw.Data))
	for i, r := range raw.Data {
		v, err := parseValue(r)
		if err != nil {
			return fmt.Errorf("data[%d]: %w", i, err)
		}
		data[i] = v
	}
	shape := raw.Shape
	if shape == nil {
		shape = []int{}
	}
	*t = Tensor{DType: raw.DType, Shape: shape, Data: data, View: raw.View, RequiresGrad: raw.RequiresGrad}
	return nil
}

func parseValue(r json.RawMessage) (float64, error) {
	r = bytes.TrimSpace(r)
	if len(r) == 0 {
		return 0, errors.New("empty value")
	}
	switch r[0] {
	case '"':
		var s string
		if err := json.Unmarshal(r, &s); err != nil {
			return 0, err
		}
		return ParseFloat(s)
	case 't':
		if string(r) == "true" {
			return 1, nil
		}
	case 'f':
		if string(r) == "false" {
			return 0, nil
		}
	default:
		return strconv.ParseFloat(string(r), 64)
	}
	return 0, fmt.Errorf("bad value %s", r)
}

// ParseFloat parses a float as written in the reference files: a decimal
// number or one of "nan", "inf", "+inf", "-inf".
func ParseFloat(s string) (float64, error) {
	switch strings.ToLower(s) {
	case "nan":
		return math.NaN(), nil
	case "inf", "+inf", "infinity":
		return math.Inf(1), nil
	case "-inf", "-infinity":
		return math.Inf(-1), nil
	}
	return strconv.ParseFloat(s, 64)
}

// Load reads and decodes one reference file.
func Load(path string) (File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return File{}, err
	}
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		return File{}, fmt.Errorf("torchref: %s: %w", path, err)
	}
	return f, nil
}

// Dir returns the directory holding the reference files,
// <module root>/testdata/torch, found by walking up from the working
// directory (a package directory during go test) to the directory with go.mod.
func Dir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "testdata", "torch"), nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("torchref: no go.mod above %s", wd)
		}
		d = parent
	}
}

// MustLoad loads testdata/torch/<name>.json ("elementwise", "reduce",
// "linalg", "index", "nn", "shape"; a trailing ".json" is accepted) from any
// package directory of the module and returns its cases, failing tb on error.
func MustLoad(tb testing.TB, name string) []Case {
	tb.Helper()
	f := MustLoadFile(tb, name)
	return f.Cases
}

// MustLoadFile is MustLoad returning the whole File (header included).
func MustLoadFile(tb testing.TB, name string) File {
	tb.Helper()
	dir, err := Dir()
	if err != nil {
		tb.Fatal(err)
	}
	name = strings.TrimSuffix(name, ".json")
	f, err := Load(filepath.Join(dir, name+".json"))
	if err != nil {
		tb.Fatalf("torchref: %v (regenerate with /usr/bin/python3 tools/torchref/gen.py)", err)
	}
	if len(f.Cases) == 0 {
		tb.Fatalf("torchref: %s.json has no cases", name)
	}
	return f
}

// ByOp returns the cases whose Op is op, in file order.
func ByOp(cases []Case, op string) []Case {
	var out []Case
	for _, c := range cases {
		if c.Op == op {
			out = append(out, c)
		}
	}
	return out
}

// ---------------------------------------------------------------------------
// Attribute accessors. They panic with a descriptive message when the
// attribute is missing or has the wrong type: a test bug, not a data case.

// Has reports whether attribute key is present and not null.
func (c Case) Has(key string) bool {
	v, ok := c.Attrs[key]
	return ok && v != nil
}

func (c Case) attr(key string) any {
	v, ok := c.Attrs[key]
	if !ok || v == nil {
		panic(fmt.Sprintf("torchref: case %s: attr %q missing or null", c.Name, key))
	}
	return v
}

// Float returns a numeric attribute; "nan", "inf" and "-inf" are accepted.
func (c Case) Float(key string) float64 {
	switch v := c.attr(key).(type) {
	case float64:
		return v
	case string:
		f, err := ParseFloat(v)
		if err == nil {
			return f
		}
	}
	panic(fmt.Sprintf("torchref: case %s: attr %q = %v is not a number", c.Name, key, c.Attrs[key]))
}

// Int returns an integral numeric attribute.
func (c Case) Int(key string) int {
	v, ok := c.attr(key).(float64)
	if !ok || v != math.Trunc(v) {
		panic(fmt.Sprintf("torchref: case %s: attr %q = %v is not an integer", c.Name, key, c.Attrs[key]))
	}
	return int(v)
}

// Ints returns a list-of-integers attribute; a single integer yields a
// one-element list.
func (c Case) Ints(key string) []int {
	switch v := c.attr(key).(type) {
	case float64:
		return []int{c.Int(key)}
	case []any:
		out, err := toInts(v)
		if err == nil {
			return out
		}
	}
	panic(fmt.Sprintf("torchref: case %s: attr %q = %v is not a list of integers", c.Name, key, c.Attrs[key]))
}

// Bool returns a boolean attribute.
func (c Case) Bool(key string) bool {
	v, ok := c.attr(key).(bool)
	if !ok {
		panic(fmt.Sprintf("torchref: case %s: attr %q = %v is not a bool", c.Name, key, c.Attrs[key]))
	}
	return v
}

// String returns a string attribute.
func (c Case) String(key string) string {
	v, ok := c.attr(key).(string)
	if !ok {
		panic(fmt.Sprintf("torchref: case %s: attr %q = %v is not a string", c.Name, key, c.Attrs[key]))
	}
	return v
}

func toInts(v []any) ([]int, error) {
	out := make([]int, len(v))
	for i, e := range v {
		f, ok := e.(float64)
		if !ok || f != math.Trunc(f) {
			return nil, fmt.Errorf("element %d = %v is not an integer", i, e)
		}
		out[i] = int(f)
	}
	return out, nil
}

// ---------------------------------------------------------------------------
// Tensor helpers.

// Numel is the number of elements implied by Shape (1 for a 0-d tensor).
func (t Tensor) Numel() int { return layout.Numel(t.Shape) }

// IsFloat reports whether the dtype is float32 or float64.
func (t Tensor) IsFloat() bool { return t.DType == "float32" || t.DType == "float64" }

// Float32s returns Data converted to float32 (exact for float32 tensors and
// for the float32-representable inputs the generator draws).
func (t Tensor) Float32s() []float32 {
	out := make([]float32, len(t.Data))
	for i, v := range t.Data {
		out[i] = float32(v)
	}
	return out
}

// Ints returns Data converted to int (for int32/int64/bool tensors).
func (t Tensor) Ints() []int {
	out := make([]int, len(t.Data))
	for i, v := range t.Data {
		out[i] = int(v)
	}
	return out
}

// Int64s returns Data converted to int64.
func (t Tensor) Int64s() []int64 {
	out := make([]int64, len(t.Data))
	for i, v := range t.Data {
		out[i] = int64(v)
	}
	return out
}

// Int32s returns Data converted to int32.
func (t Tensor) Int32s() []int32 {
	out := make([]int32, len(t.Data))
	for i, v := range t.Data {
		out[i] = int32(v)
	}
	return out
}

// Bools returns Data as bools (non-zero is true).
func (t Tensor) Bools() []bool {
	out := make([]bool, len(t.Data))
	for i, v := range t.Data {
		out[i] = v != 0
	}
	return out
}
