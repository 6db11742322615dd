package checkpoint

import (
	"encoding/binary"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/tessera-ml/tessera/tensor"
)

// A File is a loaded checkpoint: its tensors by name and its metadata.
type File struct {
	Path    string
	Tensors map[string]*tensor.Tensor
	Meta    map[string]string // never nil
}

// Names returns the tensors' names, sorted.
func (f *File) Names() []string { return sortedNames(f.Tensors) }

// Sub returns the part of f saved under prefix: the tensors whose names
// start with it, renamed without it, sharing f's tensors and metadata.
// A checkpoint that holds a model under "model." and its optimizer under
// "optimizer." loads each part strictly:
//
//	_, err := checkpoint.LoadInto(f.Sub("model."), nn.StateDict(model), true)
func (f *File) Sub(prefix string) *File {
	sub := &File{Path: f.Path, Tensors: map[string]*tensor.Tensor{}, Meta: f.Meta}
	for name, t := range f.Tensors {
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			sub.Tensors[rest] = t
		}
	}
	return sub
}

// Release releases every tensor of f (see tensor.Tensor.Release).
func (f *File) Release() {
	for _, t := range f.Tensors {
		t.Release()
	}
}

// An Option sets where Load puts the tensors.
type Option func(*options)

type options struct {
	dev tensor.Device
	ctx *tensor.Context
}

// On makes Load put the tensors on dev (default the CPU).
func On(dev tensor.Device) Option { return func(o *options) { o.dev = dev } }

// In makes Load create the tensors in context c (default the default
// context; see tensor.Context).
func In(c *tensor.Context) Option { return func(o *options) { o.ctx = c } }

// Load reads the safetensors file at path, whole, or fails: nothing is
// returned half-read. The tensors are made on the device of On (default
// the CPU), in the context of In; inside a tensor.Scope they belong to
// it, like any tensor made there. F32, F64, I32 and BOOL load as
// Float32, Float64, Int32 and Bool; files that PyTorch wrote may also
// hold I64, loaded as Int32 (Tessera's integer type) when every value
// fits, and F16 or BF16, converted exactly to Float32.
//
// A file with a checksum (MetaChecksum, which Save writes) must match
// it, and File.Meta leaves it out; a file without one loads unchecked.
//
// The errors are *FileErrors naming the file, the tensor and the
// problem: ErrTruncated for a file shorter than its header says;
// ErrChecksum for tensors or a header that do not match the checksum (a
// damaged file); ErrFormat for a file that is not well-formed
// safetensors otherwise (a header length past the end of the file;
// invalid JSON; an unknown dtype; a shape whose size disagrees with its
// data_offsets; overlapping or gapped offsets; trailing bytes; a name
// given twice; a negative or overflowing dimension; a BOOL byte other
// than 0 or 1); tensor.ErrDType for a dtype Tessera does not read (U8,
// I8, I16, U16, U32, U64, F8), an I64 value outside int32, or an F64
// tensor asked onto a GPU; tensor.ErrDevice for a device that does not
// open; or the file system's error. Sizes are checked against the
// file's length before anything is allocated.
func Load(path string, opts ...Option) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fileErr("Load", path, err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, fileErr("Load", path, err)
	}
	f, err := decode(fh, st.Size(), opts)
	if err != nil {
		return nil, fileErr("Load", path, err)
	}
	f.Path = path
	return f, nil
}

// decode reads a safetensors file of size bytes from r.
func decode(r io.ReaderAt, size int64, opts []Option) (*File, error) {
	o := options{dev: tensor.CPU, ctx: tensor.DefaultContext()}
	for _, opt := range opts {
		opt(&o)
	}
	if err := tensor.Available(o.dev); err != nil {
		return nil, &FileError{Detail: err.Error(), Err: tensor.ErrDevice}
	}
	if size < 8 {
		return nil, truncErr(8, size, "too short for the 8-byte header length")
	}
	var lenBuf [8]byte
	if _, err := io.ReadFull(io.NewSectionReader(r, 0, 8), lenBuf[:]); err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n > uint64(size-8) {
		if n <= maxHeader {
			return nil, truncErr(8+int64(n), size, "the header length %d runs past the end of the %d-byte file", n, size)
		}
		return nil, formatErr("the header length %d runs past the end of the %d-byte file (not a safetensors file?)", n, size)
	}
	if n > maxHeader {
		return nil, formatErr("the header length %d exceeds the limit of %d bytes", n, maxHeader)
	}
	h := make([]byte, n)
	if _, err := io.ReadFull(io.NewSectionReader(r, 8, int64(n)), h); err != nil {
		return nil, err
	}
	hd, err := parseHeader(h, size-8-int64(n))
	if err != nil {
		return nil, err
	}
	sums, err := hd.verify()
	if err != nil {
		return nil, err
	}
	f := &File{Tensors: make(map[string]*tensor.Tensor, len(hd.entries)), Meta: hd.meta}
	if f.Meta == nil {
		f.Meta = map[string]string{}
	}
	for _, e := range hd.entries { // refuse what cannot load before reading any data
		if err := loadable(e, o.dev); err != nil {
			return nil, err
		}
	}
	for _, e := range hd.entries {
		at := 8 + int64(n) + e.begin
		t, err := readTensor(io.NewSectionReader(r, at, e.end-e.begin), e, o, sums[e.name], at)
		if err != nil {
			f.Release()
			return nil, err
		}
		f.Tensors[e.name] = t
	}
	return f, nil
}

// verify checks the header's checksum (MetaChecksum), if it has one,
// and removes it from the metadata. It returns each tensor's checksum
// by name, or nil for a file without one (written by another program,
// or by Tessera before it wrote checksums).
func (hd *header) verify() (map[string]*uint32, error) {
	v, ok := hd.meta[MetaChecksum]
	if !ok {
		return nil, nil
	}
	delete(hd.meta, MetaChecksum)
	c, err := parseChecksum(v, len(hd.entries))
	if err != nil {
		return nil, err
	}
	ts := make([]summed, len(hd.entries))
	for i, e := range hd.entries {
		ts[i] = summed{DType: e.dtype.name, Name: e.name, Shape: e.shape}
	}
	slices.SortFunc(ts, func(a, b summed) int { return strings.Compare(a.Name, b.Name) })
	sums := make(map[string]*uint32, len(ts))
	for i := range ts {
		ts[i].Sum = c.tensors[i]
		sums[ts[i].Name] = &c.tensors[i]
	}
	if got := headerSum(hd.meta, ts); got != c.header {
		return nil, checksumErr("the header's tensor names, dtypes, shapes and metadata", got, c.header)
	}
	return sums, nil
}

// loadable reports why e cannot load onto dev, if it cannot.
func loadable(e entry, dev tensor.Device) error {
	if !e.dtype.read {
		return &FileError{Detail: fmt.Sprintf("tensor %q: dtype %s is not one Tessera reads (F32, F64, I32, BOOL; I64 into int32; F16, BF16 into float32)",
			e.name, e.dtype.name), Err: tensor.ErrDType}
	}
	if !dev.Holds(e.dtype.to) {
		return &FileError{Detail: fmt.Sprintf("tensor %q: F64 cannot load onto %v (WGSL has no f64): load it on the CPU and cast",
			e.name, dev), Err: tensor.ErrDType}
	}
	return nil
}

// readTensor reads e's data from r, which starts at byte at of the
// file, and makes its tensor. When want is not nil, the data must have
// that CRC-32C; a mismatch is reported before what the damage did to an
// element (a BOOL byte other than 0 or 1).
func readTensor(r io.Reader, e entry, o options, want *uint32, at int64) (*tensor.Tensor, error) {
	var h hash.Hash32
	if want != nil {
		h = crc32.New(castagnoli)
		r = io.TeeReader(r, h)
	}
	data, err := readData(r, e)
	if h != nil {
		if err != nil {
			io.Copy(io.Discard, r) // the rest of the tensor, into h
		}
		if got := h.Sum32(); got != *want {
			return nil, checksumErr(fmt.Sprintf("the bytes of tensor %q (bytes %d to %d of the file)", e.name, at, at+e.end-e.begin), got, *want)
		}
	}
	if err != nil {
		return nil, err
	}
	var t *tensor.Tensor
	if err := tensor.Catch(func() { t = fromHost(data, e.shape, o) }); err != nil {
		return nil, &FileError{Detail: fmt.Sprintf("tensor %q: %v", e.name, err), Err: err}
	}
	return t, nil
}

// readData reads e's elements from r into a slice of the Go type of the
// dtype e loads as, converting I64, F16 and BF16.
func readData(r io.Reader, e entry) (any, error) {
	le := binary.LittleEndian
	switch e.dtype.name {
	case "F64":
		return readElems(r, e, func(b []byte, _ int) (float64, error) { return math.Float64frombits(le.Uint64(b)), nil })
	case "I32":
		return readElems(r, e, func(b []byte, _ int) (int32, error) { return int32(le.Uint32(b)), nil })
	case "F16":
		return readElems(r, e, func(b []byte, _ int) (float32, error) { return halfToFloat32(le.Uint16(b)), nil })
	case "BF16":
		return readElems(r, e, func(b []byte, _ int) (float32, error) { return math.Float32frombits(uint32(le.Uint16(b)) << 16), nil })
	case "BOOL":
		return readElems(r, e, func(b []byte, i int) (bool, error) {
			if b[0] > 1 {
				return false, formatErr("tensor %q: BOOL element %d is the byte %d, not 0 or 1", e.name, i, b[0])
			}
			return b[0] == 1, nil
		})
	case "I64":
		return readElems(r, e, func(b []byte, i int) (int32, error) {
			v := int64(le.Uint64(b))
			if v != int64(int32(v)) {
				return 0, &FileError{Detail: fmt.Sprintf("tensor %q: I64 element %d is %d, outside int32 (Tessera's integer type)", e.name, i, v),
					Err: tensor.ErrDType}
			}
			return int32(v), nil
		})
	}
	// F32: loadable refused the dtypes Tessera does not read.
	return readElems(r, e, func(b []byte, _ int) (float32, error) { return math.Float32frombits(le.Uint32(b)), nil })
}

// readElems reads e.numel elements from r, a chunk at a time, decoding
// each with conv. A tensor beyond the CPU budget is an out-of-memory
// error before its host slice is made.
func readElems[T tensor.Element](r io.Reader, e entry, conv func(b []byte, i int) (T, error)) ([]T, error) {
	const chunk = 1 << 14 // elements
	size := e.dtype.size
	// The host slice (at most 4 bytes an element) and the tensor made
	// from it (4 bytes an element).
	if err := tensor.CheckHostMemory("checkpoint.Load", e.numel, 8); err != nil {
		return nil, &FileError{Detail: fmt.Sprintf("tensor %q: %v", e.name, err), Err: err}
	}
	out := make([]T, e.numel)
	buf := make([]byte, min(e.numel, chunk)*size)
	for i := 0; i < e.numel; i += chunk {
		k := min(e.numel-i, chunk)
		if _, err := io.ReadFull(r, buf[:k*size]); err != nil {
			return nil, &FileError{Detail: fmt.Sprintf("tensor %q: reading its data: %v", e.name, err), Err: err}
		}
		for j := range k {
			v, err := conv(buf[j*size:], i+j)
			if err != nil {
				return nil, err
			}
			out[i+j] = v
		}
	}
	return out, nil
}

// fromHost makes a tensor of shape from data on o's device and context.
func fromHost(data any, shape []int, o options) *tensor.Tensor {
	if shape == nil {
		shape = []int{}
	}
	opts := []tensor.Option{tensor.On(o.dev), tensor.In(o.ctx)}
	switch d := data.(type) {
	case []float64:
		return tensor.From(d, shape, opts...)
	case []int32:
		return tensor.From(d, shape, opts...)
	case []bool:
		return tensor.From(d, shape, opts...)
	}
	return tensor.From(data.([]float32), shape, opts...)
}
