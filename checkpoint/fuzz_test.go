package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/tensor"
)

// FuzzDecode decodes arbitrary bytes as a safetensors file and checks
// that decode never panics; that every error is one line in a *FileError
// wrapping ErrFormat or tensor.ErrDType (reading from memory cannot fail
// otherwise) and comes with no File; and that an accepted file holds
// exactly the bytes its header describes for the dtypes Tessera stores
// as they are, and writes back to a file that decodes to the same
// tensors and metadata. The seed corpus is the malformed files of
// load_test.go, files Save writes, and testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	for _, c := range malformed {
		f.Add(c.file)
	}
	var b bytes.Buffer
	if err := encodeTo(&b, sample(tensor.CPU), map[string]string{"step": "3"}); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := decode(bytes.NewReader(data), int64(len(data)), nil)
		if err != nil {
			var fe *FileError
			if file != nil || !errors.As(err, &fe) || !(errors.Is(err, ErrFormat) || errors.Is(err, tensor.ErrDType)) ||
				strings.Contains(err.Error(), "\n") {
				t.Fatalf("decode returned %v and error %q (%T)", file, err, err)
			}
			return
		}
		defer file.Release()
		n := binary.LittleEndian.Uint64(data)
		hd, err := parseHeader(data[8:8+n], int64(len(data))-8-int64(n))
		if err != nil {
			t.Fatalf("accepted a file whose header does not parse again: %v", err)
		}
		for _, e := range hd.entries {
			if e.dtype.size != e.dtype.to.Size() || e.dtype.name == "I64" {
				continue // converted on loading
			}
			var got bytes.Buffer
			if err := writeTensor(&got, file.Tensors[e.name]); err != nil {
				t.Fatal(err)
			}
			if want := data[8+int64(n)+e.begin : 8+int64(n)+e.end]; !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("tensor %q holds other bytes than the file's", e.name)
			}
		}
		var again bytes.Buffer
		if err := encodeTo(&again, file.Tensors, file.Meta); err != nil {
			t.Fatalf("an accepted file does not write back: %v", err)
		}
		back, err := decode(bytes.NewReader(again.Bytes()), int64(again.Len()), nil)
		if err != nil {
			t.Fatalf("a written-back file does not decode: %v", err)
		}
		defer back.Release()
		if !slices.Equal(back.Names(), file.Names()) || !maps.Equal(back.Meta, file.Meta) {
			t.Fatalf("written back as %v %v, want %v %v", back.Names(), back.Meta, file.Names(), file.Meta)
		}
		for name, x := range file.Tensors {
			sameTensor(t, name, back.Tensors[name], x)
		}
	})
}
