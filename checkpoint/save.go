package checkpoint

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tessera-ml/tessera/internal/atomicfile"
	"github.com/tessera-ml/tessera/tensor"
)

// testWriter, when set by a test, wraps the writer Save writes the
// temporary file through, to inject faults.
var testWriter func(io.Writer) io.Writer

// Save writes tensors and meta to path as a safetensors file,
// atomically: through a temporary file in path's folder that is synced
// and renamed over path, so that after a failure (an error, a crash, a
// full disk) path holds its previous contents, or nothing if it did not
// exist. Names follow PyTorch's dotted state-dict convention
// ("layers.0.weight"). Each tensor is written row-major and contiguous,
// whatever its strides, in its own dtype (Float32 as F32, Float64 as F64,
// Int32 as I32, Bool as BOOL); GPU tensors are read back first. meta
// (nil for none) becomes the header's "__metadata__" map; SetMeta stores
// structured values in it. Save adds a checksum of the tensors and the
// metadata under MetaChecksum, which Load verifies. The same tensors and
// meta always give the same bytes.
//
// The errors are *FileErrors: tensor.ErrArgument for an empty, non-UTF-8
// or reserved name, a nil tensor, non-UTF-8 metadata or a MetaChecksum
// key in meta; the *tensor.Error of a released tensor or a failed GPU
// read; or the file system's error (a full disk: "no space left on
// device", or "file too large" past a file-size limit).
func Save(path string, tensors map[string]*tensor.Tensor, meta map[string]string) error {
	l, err := plan(tensors, meta)
	if err != nil {
		return fileErr("Save", path, err)
	}
	err = atomicfile.Write(path, func(w io.Writer) error {
		ww := w
		if testWriter != nil {
			ww = testWriter(w)
		}
		sum, err := encode(ww, l)
		if err != nil {
			return err
		}
		_, err = w.(io.WriterAt).WriteAt(sum, l.sumAt)
		return err
	})
	return fileErr("Save", path, err)
}

// An item is a tensor to write and its place in the file.
type item struct {
	name   string
	t      *tensor.Tensor
	stored fileDType
	begin  int64
}

// A layout is a file as Save writes it: the tensors in data order, and
// the header with the checksum's digits zero, to be written at sumAt.
type layout struct {
	items  []item
	meta   map[string]string // the caller's, without the checksum
	header []byte
	sumAt  int64 // the file offset of MetaChecksum's value
}

// plan checks Save's arguments, orders the tensors as the reference
// implementation does (larger elements first, so that every tensor is
// aligned to its element size, then by name) and returns them with the
// header that describes them, padded with spaces to a multiple of 8
// bytes.
func plan(tensors map[string]*tensor.Tensor, meta map[string]string) (*layout, error) {
	l := &layout{items: make([]item, 0, len(tensors)), meta: meta}
	for name, t := range tensors {
		switch {
		case name == "" || name == metaKey || !utf8.ValidString(name):
			return nil, argErr("invalid tensor name %q (empty, not UTF-8, or %q)", name, metaKey)
		case t == nil:
			return nil, argErr("tensor %q is nil", name)
		}
		fd, ok := storedAs(t.DType())
		if !ok {
			return nil, argErr("tensor %q has dtype %v, which safetensors cannot hold", name, t.DType())
		}
		l.items = append(l.items, item{name: name, t: t, stored: fd})
	}
	for k, v := range meta {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return nil, argErr("metadata key %q or its value is not valid UTF-8", k)
		}
		if k == MetaChecksum {
			return nil, argErr("metadata key %q is the checksum Save writes itself", k)
		}
	}
	slices.SortFunc(l.items, func(a, b item) int {
		if a.stored.size != b.stored.size {
			return b.stored.size - a.stored.size
		}
		return strings.Compare(a.name, b.name)
	})
	full := maps.Clone(meta)
	if full == nil {
		full = map[string]string{}
	}
	full[MetaChecksum] = checksum{tensors: make([]uint32, len(tensors))}.String()
	m, _ := json.Marshal(full) // strings only: cannot fail; keys sorted
	b := fmt.Appendf(nil, "{%q:%s", metaKey, m)
	// The value follows `"tessera.checksum":"`, the only place where the
	// key stands in quotes before a colon: quotes inside strings are
	// escaped.
	key := strconv.Quote(MetaChecksum) + `:"`
	l.sumAt = 8 + int64(bytes.Index(b, []byte(key))+len(key))
	var off int64
	for i := range l.items {
		it := &l.items[i]
		it.begin = off
		off += int64(it.t.Numel() * it.stored.size)
		name, _ := json.Marshal(it.name)
		shape := it.t.Shape()
		if shape == nil {
			shape = []int{}
		}
		dims, _ := json.Marshal(shape)
		b = fmt.Appendf(b, `,%s:{"dtype":%q,"shape":%s,"data_offsets":[%d,%d]}`, name, it.stored.name, dims, it.begin, off)
	}
	b = append(b, '}')
	for len(b)%8 != 0 {
		b = append(b, ' ')
	}
	l.header = b
	return l, nil
}

// encode writes the header length, the header and each tensor's data,
// and returns the checksum to write at l.sumAt.
func encode(w io.Writer, l *layout) ([]byte, error) {
	if _, err := w.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(l.header)))); err != nil {
		return nil, err
	}
	if _, err := w.Write(l.header); err != nil {
		return nil, err
	}
	sums := make([]summed, len(l.items))
	for i, it := range l.items {
		h := crc32.New(castagnoli)
		var err error
		if cerr := tensor.Catch(func() { err = writeTensor(io.MultiWriter(w, h), it.t) }); cerr != nil {
			return nil, &FileError{Detail: fmt.Sprintf("tensor %q: %v", it.name, cerr), Err: cerr}
		}
		if err != nil {
			return nil, err
		}
		sums[i] = summed{Sum: h.Sum32(), DType: it.stored.name, Name: it.name, Shape: it.t.Shape()}
	}
	c := checksum{header: headerSum(l.meta, sums)} // sorts sums by name
	for _, s := range sums {
		c.tensors = append(c.tensors, s.Sum)
	}
	return []byte(c.String()), nil
}

// writeTensor writes t's elements, row-major and little-endian, reading a
// GPU tensor back first.
func writeTensor(w io.Writer, t *tensor.Tensor) error {
	switch t.DType() {
	case tensor.Float64:
		return writeLE(w, t.Float64s())
	case tensor.Int32:
		return writeLE(w, t.Int32s())
	case tensor.Bool:
		return writeLE(w, t.Bools())
	}
	return writeLE(w, t.Float32s())
}

// writeLE writes data's little-endian bytes a bounded chunk at a time,
// so that a large tensor is not copied whole once more.
func writeLE[T tensor.Element](w io.Writer, data []T) error {
	const chunk = 1 << 14 // elements
	var buf []byte
	for i := 0; i < len(data); i += chunk {
		buf = appendLE(buf[:0], data[i:min(len(data), i+chunk)])
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return nil
}

// argErr returns a tensor.ErrArgument error with a formatted detail.
func argErr(format string, args ...any) *FileError {
	return &FileError{Detail: fmt.Sprintf(format, args...), Err: tensor.ErrArgument}
}
