package wgsl

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
)

// A ParamField is one member of a kernel's uniform parameter struct.
// Type is "u32", "i32", "f32" (4-byte scalars, 4-byte aligned) or "array"
// (array<vec4<u32>, Len>, 16-byte aligned, Len*16 bytes), so the struct
// obeys WGSL's uniform layout rules without padding members.
type ParamField struct {
	Name string
	Type string
	Len  int // vec4s of an "array"
}

// Params encodes one kernel's uniform parameters: the struct is declared
// once (NewParams), Struct renders its WGSL declaration, the setters fill
// members by name, and Bytes returns the little-endian bytes, padded to 16
// bytes. Because the WGSL text and the byte offsets come from the same
// field list, they cannot disagree. Setting an unknown member or an array
// longer than declared panics (a bug in a generator).
type Params struct {
	fields []ParamField
	off    []int
	buf    []byte
}

// NewParams lays out fields in order and returns zeroed Params.
func NewParams(fields ...ParamField) *Params {
	p := &Params{fields: fields, off: make([]int, len(fields))}
	at := 0
	for i, f := range fields {
		switch f.Type {
		case "u32", "i32", "f32":
			p.off[i] = at
			at += 4
		case "array":
			at = (at + 15) &^ 15
			p.off[i] = at
			at += 16 * f.Len
		default:
			panic("wgsl: bad param type " + f.Type)
		}
	}
	p.buf = make([]byte, (at+15)&^15)
	return p
}

// Struct returns the WGSL declaration of the struct, named Params.
func (p *Params) Struct() string {
	var b strings.Builder
	b.WriteString("struct Params {\n")
	for _, f := range p.fields {
		if f.Type == "array" {
			fmt.Fprintf(&b, "\t%s: array<vec4<u32>, %d>,\n", f.Name, f.Len)
		} else {
			fmt.Fprintf(&b, "\t%s: %s,\n", f.Name, f.Type)
		}
	}
	b.WriteString("}\n")
	return b.String()
}

// Bytes returns the encoded parameters (a copy).
func (p *Params) Bytes() []byte { return append([]byte(nil), p.buf...) }

// Size returns the encoded size in bytes.
func (p *Params) Size() int { return len(p.buf) }

func (p *Params) field(name string, want string) int {
	for i, f := range p.fields {
		if f.Name == name {
			if f.Type != want {
				panic(fmt.Sprintf("wgsl: param %s is %s, not %s", name, f.Type, want))
			}
			return i
		}
	}
	panic("wgsl: no param " + name)
}

// SetU32 sets a u32 member.
func (p *Params) SetU32(name string, v uint32) *Params {
	binary.LittleEndian.PutUint32(p.buf[p.off[p.field(name, "u32")]:], v)
	return p
}

// SetI32 sets an i32 member.
func (p *Params) SetI32(name string, v int32) *Params {
	binary.LittleEndian.PutUint32(p.buf[p.off[p.field(name, "i32")]:], uint32(v))
	return p
}

// SetF32 sets an f32 member.
func (p *Params) SetF32(name string, v float32) *Params {
	binary.LittleEndian.PutUint32(p.buf[p.off[p.field(name, "f32")]:], math.Float32bits(v))
	return p
}

// SetArray sets the first len(v) u32 elements of an array member; the
// rest keep their value (zero unless set before).
func (p *Params) SetArray(name string, v []uint32) *Params {
	i := p.field(name, "array")
	if len(v) > 4*p.fields[i].Len {
		panic(fmt.Sprintf("wgsl: %d values for param %s of %d", len(v), name, 4*p.fields[i].Len))
	}
	for j, x := range v {
		binary.LittleEndian.PutUint32(p.buf[p.off[i]+4*j:], x)
	}
	return p
}

// U32 reads a u32 member back.
func (p *Params) U32(name string) uint32 {
	return binary.LittleEndian.Uint32(p.buf[p.off[p.field(name, "u32")]:])
}

// I32 reads an i32 member back.
func (p *Params) I32(name string) int32 {
	return int32(binary.LittleEndian.Uint32(p.buf[p.off[p.field(name, "i32")]:]))
}

// F32 reads an f32 member back.
func (p *Params) F32(name string) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(p.buf[p.off[p.field(name, "f32")]:]))
}

// Array reads an array member back (all 4*Len elements).
func (p *Params) Array(name string) []uint32 {
	i := p.field(name, "array")
	v := make([]uint32, 4*p.fields[i].Len)
	for j := range v {
		v[j] = binary.LittleEndian.Uint32(p.buf[p.off[i]+4*j:])
	}
	return v
}

// Offset returns the byte offset of a member (for tests and debugging).
func (p *Params) Offset(name string) int {
	for i, f := range p.fields {
		if f.Name == name {
			return p.off[i]
		}
	}
	return -1
}

// u32s converts non-negative ints to u32, padding to n with pad.
func u32s(v []int, n int, pad uint32) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = pad
	}
	for i, x := range v {
		out[i] = uint32(x)
	}
	return out
}

// scalarBits encodes a float64 scalar as the bits of type t (f32 or i32;
// i32 saturates, NaN gives 0).
func scalarBits(v float64, t string) uint32 {
	if t == I32 {
		switch {
		case v != v:
			return 0
		case v >= math.MaxInt32:
			return math.MaxInt32
		case v <= math.MinInt32:
			return 1 << 31
		}
		return uint32(int32(v))
	}
	return math.Float32bits(float32(v))
}
