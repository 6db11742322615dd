package checkpoint

import (
	"encoding/binary"
	"math"

	"github.com/tessera-ml/tessera/tensor"
)

// A fileDType is a dtype of the safetensors format: its element size
// and, when Tessera reads it, the dtype it loads as.
type fileDType struct {
	name string
	size int
	to   tensor.DType
	read bool // Tessera reads it (into to)
}

// fileDTypes lists every dtype of the safetensors specification. Tessera
// reads its own four (F32, F64, I32, BOOL), I64 (into Int32, with a range
// check) and F16 and BF16 (into Float32, exactly); the others are known,
// so their sizes are validated, but loading them is an ErrDType error.
var fileDTypes = map[string]fileDType{
	"F32":  {"F32", 4, tensor.Float32, true},
	"F64":  {"F64", 8, tensor.Float64, true},
	"I32":  {"I32", 4, tensor.Int32, true},
	"BOOL": {"BOOL", 1, tensor.Bool, true},
	"I64":  {"I64", 8, tensor.Int32, true},
	"F16":  {"F16", 2, tensor.Float32, true},
	"BF16": {"BF16", 2, tensor.Float32, true},
	"U8":   {name: "U8", size: 1}, "I8": {name: "I8", size: 1},
	"I16": {name: "I16", size: 2}, "U16": {name: "U16", size: 2},
	"U32": {name: "U32", size: 4}, "U64": {name: "U64", size: 8},
	"F8_E4M3": {name: "F8_E4M3", size: 1}, "F8_E5M2": {name: "F8_E5M2", size: 1},
}

// storedAs returns the file dtype a Tessera dtype is written as.
func storedAs(dt tensor.DType) (fileDType, bool) {
	switch dt {
	case tensor.Float32:
		return fileDTypes["F32"], true
	case tensor.Float64:
		return fileDTypes["F64"], true
	case tensor.Int32:
		return fileDTypes["I32"], true
	case tensor.Bool:
		return fileDTypes["BOOL"], true
	}
	return fileDType{}, false
}

// appendLE appends the little-endian bytes of data, a slice of one of
// Tessera's element types, to b.
func appendLE(b []byte, data any) []byte {
	switch d := data.(type) {
	case []float32:
		for _, v := range d {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
	case []float64:
		for _, v := range d {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
	case []int32:
		for _, v := range d {
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		}
	case []bool:
		for _, v := range d {
			if v {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
		}
	}
	return b
}

// halfToFloat32 converts IEEE 754 binary16 bits to float32, exactly.
func halfToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // inf, NaN (payload kept)
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp != 0: // normal
		return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
	case frac == 0: // ±0
		return math.Float32frombits(sign)
	}
	// subnormal: frac · 2^-24, exact in float32
	v := float32(frac) * (1.0 / (1 << 24))
	if sign != 0 {
		v = -v
	}
	return v
}
