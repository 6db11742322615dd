package checkpoint

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"slices"
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
// structured values in it. The same tensors and meta always give the
// same bytes.
//
// The errors are *FileErrors: tensor.ErrArgument for an empty, non-UTF-8
// or reserved name, a nil tensor or non-UTF-8 metadata; the *tensor.Error
// of a released tensor or a failed GPU read; or the file system's error.
func Save(path string, tensors map[string]*tensor.Tensor, meta map[string]string) error {
	items, hdr, err := plan(tensors, meta)
	if err != nil {
		return fileErr("Save", path, err)
	}
	err = atomicfile.Write(path, func(w io.Writer) error {
		if testWriter != nil {
			w = testWriter(w)
		}
		return encode(w, items, hdr)
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

// plan checks Save's arguments, orders the tensors as the reference
// implementation does (larger elements first, so that every tensor is
// aligned to its element size, then by name) and returns them with the
// header that describes them, padded with spaces to a multiple of 8
// bytes.
func plan(tensors map[string]*tensor.Tensor, meta map[string]string) ([]item, []byte, error) {
	items := make([]item, 0, len(tensors))
	for name, t := range tensors {
		switch {
		case name == "" || name == metaKey || !utf8.ValidString(name):
			return nil, nil, argErr("invalid tensor name %q (empty, not UTF-8, or %q)", name, metaKey)
		case t == nil:
			return nil, nil, argErr("tensor %q is nil", name)
		}
		fd, ok := storedAs(t.DType())
		if !ok {
			return nil, nil, argErr("tensor %q has dtype %v, which safetensors cannot hold", name, t.DType())
		}
		items = append(items, item{name: name, t: t, stored: fd})
	}
	for k, v := range meta {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return nil, nil, argErr("metadata key %q or its value is not valid UTF-8", k)
		}
	}
	slices.SortFunc(items, func(a, b item) int {
		if a.stored.size != b.stored.size {
			return b.stored.size - a.stored.size
		}
		return strings.Compare(a.name, b.name)
	})
	var b []byte
	b = append(b, '{')
	if len(meta) > 0 {
		m, _ := json.Marshal(meta) // strings only: cannot fail; keys sorted
		b = fmt.Appendf(b, "%q:%s", metaKey, m)
	}
	var off int64
	for i := range items {
		it := &items[i]
		it.begin = off
		off += int64(it.t.Numel() * it.stored.size)
		if len(b) > 1 {
			b = append(b, ',')
		}
		name, _ := json.Marshal(it.name)
		shape := it.t.Shape()
		if shape == nil {
			shape = []int{}
		}
		dims, _ := json.Marshal(shape)
		b = fmt.Appendf(b, `%s:{"dtype":%q,"shape":%s,"data_offsets":[%d,%d]}`, name, it.stored.name, dims, it.begin, off)
	}
	b = append(b, '}')
	for len(b)%8 != 0 {
		b = append(b, ' ')
	}
	return items, b, nil
}

// encode writes the header length, the header and each tensor's data.
func encode(w io.Writer, items []item, hdr []byte) error {
	if _, err := w.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(hdr)))); err != nil {
		return err
	}
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	for _, it := range items {
		var err error
		if cerr := tensor.Catch(func() { err = writeTensor(w, it.t) }); cerr != nil {
			return &FileError{Detail: fmt.Sprintf("tensor %q: %v", it.name, cerr), Err: cerr}
		}
		if err != nil {
			return err
		}
	}
	return nil
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
