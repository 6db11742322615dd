package checkpoint

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/tensor"
)

// savedSample saves sample(tensor.CPU) with some metadata to a file in
// dir and returns the file's bytes, the tensors and the metadata.
func savedSample(t *testing.T, dir string) ([]byte, map[string]*tensor.Tensor, map[string]string) {
	t.Helper()
	p := filepath.Join(dir, "good.safetensors")
	ts, meta := sample(tensor.CPU), map[string]string{"step": "12", "note": "ü <tag>"}
	if err := Save(p, ts, meta); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b, ts, meta
}

// loadDamaged loads the file b as path, from disk when onDisk and from
// memory otherwise (as Load would, for the thousands of flipped bits).
// It fails the test unless it returns either a *FileError of one line
// that names path and wraps ErrFormat or tensor.ErrDType, and no File;
// or a File.
func loadDamaged(t *testing.T, path string, b []byte, onDisk bool, what string) (*File, error) {
	t.Helper()
	var f *File
	var err error
	if onDisk {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err = Load(path)
	} else if f, err = decode(bytes.NewReader(b), int64(len(b)), nil); err != nil {
		err = fileErr("Load", path, err)
	}
	if err == nil {
		return f, nil
	}
	var fe *FileError
	if f != nil || !errors.As(err, &fe) || fe.Path != path || !strings.HasPrefix(err.Error(), "checkpoint.Load "+path+": ") ||
		strings.Contains(err.Error(), "\n") || !(errors.Is(err, ErrFormat) || errors.Is(err, tensor.ErrDType)) {
		t.Fatalf("%s: Load returned %v and %q (%T), want a one-line *FileError naming the file", what, f, err, err)
	}
	return nil, err
}

// TestTruncatedFileIsAnError cuts a saved file at every length short of
// its own: each is an ErrTruncated error that says how many bytes the
// file should have and has.
func TestTruncatedFileIsAnError(t *testing.T) {
	dir := t.TempDir()
	good, _, _ := savedSample(t, dir)
	n := 8 + int(binary.LittleEndian.Uint64(good))
	p := filepath.Join(dir, "cut.safetensors")
	for k := range len(good) {
		_, err := loadDamaged(t, p, good[:k], true, fmt.Sprintf("cut to %d bytes", k))
		want := len(good)
		switch {
		case k < 8:
			want = 8
		case k < n:
			want = n
		}
		if says := fmt.Sprintf("truncated: want %d bytes, have %d", want, k); !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), says) {
			t.Fatalf("cut to %d of %d bytes: %v, want an ErrTruncated error that says %q", k, len(good), err, says)
		}
	}
}

// TestFlippedBitIsAnError flips each bit of a saved file in turn. In the
// data, the error is a checksum mismatch naming the tensor; in the
// header, an error that says what is wrong: invalid JSON, bad offsets,
// or a mismatch of the header's checksum (a name, a shape or a metadata
// value changed). A flip that loads must give the very tensors and
// metadata saved: one that spells the JSON otherwise (the escape \u003c
// as \u003C), or one in the checksum's own key, which leaves a file
// without a checksum and with one more metadata key.
func TestFlippedBitIsAnError(t *testing.T) {
	dir := t.TempDir()
	good, want, meta := savedSample(t, dir)
	n := 8 + int(binary.LittleEndian.Uint64(good))
	key := bytes.Index(good, []byte(`"`+MetaChecksum+`"`)) + 1
	type span struct {
		name       string
		begin, end int
	}
	var tensors []span
	hd, err := parseHeader(good[8:n], int64(len(good)-n))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range hd.entries {
		tensors = append(tensors, span{e.name, n + int(e.begin), n + int(e.end)})
	}
	p := filepath.Join(dir, "flipped.safetensors")
	kinds := map[string]int{}
	for i := range good {
		for bit := range 8 {
			b := slices.Clone(good)
			b[i] ^= 1 << bit
			what := fmt.Sprintf("byte %d bit %d", i, bit)
			f, err := loadDamaged(t, p, b, bit == 0, what)
			if f != nil {
				// The checksum's key damaged: a file without a checksum. Or
				// the JSON spelt otherwise (\u003c as \u003C): the same file.
				inKey := i >= key && i < key+len(MetaChecksum)
				if !maps.Equal(meta, f.Meta) && !(inKey && len(f.Meta) == len(meta)+1 && holds(f.Meta, meta)) {
					t.Fatalf("%s: loaded the metadata %q, want %q", what, f.Meta, meta)
				}
				for name, w := range want {
					sameTensor(t, what+": "+name, f.Tensors[name], w)
				}
				kinds[map[bool]string{true: "loaded without a checksum", false: "loaded the same"}[inKey]]++
				continue
			}
			if i >= n {
				k, _ := slices.BinarySearchFunc(tensors, i, func(s span, i int) int {
					if s.end <= i {
						return -1
					}
					return 1
				})
				says := fmt.Sprintf("checksum mismatch: the bytes of tensor %q (bytes %d to %d of the file)", tensors[k].name, tensors[k].begin, tensors[k].end)
				if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), says) {
					t.Fatalf("%s, in the data: %v, want an ErrChecksum error that says %q", what, err, says)
				}
			}
			switch {
			case errors.Is(err, ErrChecksum):
				kinds["checksum mismatch"]++
			case errors.Is(err, ErrTruncated):
				kinds["truncated"]++
			case errors.Is(err, ErrFormat):
				kinds["malformed"]++
			default:
				kinds["dtype"]++
			}
		}
	}
	if kinds["checksum mismatch"] < 8*(len(good)-n) || kinds["loaded without a checksum"] == 0 {
		t.Errorf("the kinds of outcome: %v", kinds)
	}
	t.Logf("%d flips: %v", 8*len(good), kinds)
}

// TestOverwrittenBlockIsAnError overwrites runs of bytes of a saved file
// with random ones, as a lost disk block or a bad copy would: every one
// is an error.
func TestOverwrittenBlockIsAnError(t *testing.T) {
	dir := t.TempDir()
	good, _, _ := savedSample(t, dir)
	p := filepath.Join(dir, "overwritten.safetensors")
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		b := slices.Clone(good)
		at, k := r.IntN(len(b)), 1+r.IntN(64)
		for j := at; j < min(len(b), at+k); j++ {
			b[j] = byte(r.Uint32())
		}
		if bytes.Equal(b, good) {
			continue
		}
		if f, _ := loadDamaged(t, p, b, false, fmt.Sprintf("bytes %d to %d overwritten", at, at+k)); f != nil {
			t.Fatalf("bytes %d to %d overwritten: the file loads", at, at+k)
		}
	}
}

// TestChecksumSurvivesRewriting rewrites a saved file as another program
// might, keeping its metadata: the header's JSON laid out otherwise
// (indented, keys in another order, non-ASCII escaped) and the tensors'
// data in reverse order. The checksum covers what the tensors and the
// metadata are, not where they lie, so the file still loads; changing a
// tensor or a metadata value then is a checksum mismatch.
func TestChecksumSurvivesRewriting(t *testing.T) {
	dir := t.TempDir()
	good, want, meta := savedSample(t, dir)
	n := 8 + int(binary.LittleEndian.Uint64(good))
	var hdr map[string]json.RawMessage
	if err := json.Unmarshal(good[8:n], &hdr); err != nil {
		t.Fatal(err)
	}
	hd, err := parseHeader(good[8:n], int64(len(good)-n))
	if err != nil {
		t.Fatal(err)
	}
	var data []byte
	for _, e := range slices.Backward(hd.entries) {
		var v map[string]any
		json.Unmarshal(hdr[e.name], &v)
		v["data_offsets"] = []int{len(data), len(data) + int(e.end-e.begin)}
		hdr[e.name], _ = json.Marshal(v)
		data = append(data, good[n+int(e.begin):n+int(e.end)]...)
	}
	h, _ := json.MarshalIndent(hdr, "", "\t")
	h = bytes.ReplaceAll(h, []byte("ü"), []byte(`\u00fc`))
	p := filepath.Join(dir, "rewritten.safetensors")
	if bytes.Equal(h, good[8:n]) {
		t.Fatal("the rewritten header is the same")
	}
	f, err := loadDamaged(t, p, raw(string(h), data...), true, "rewritten")
	if err != nil {
		t.Fatalf("the rewritten file: %v", err)
	}
	if !maps.Equal(f.Meta, meta) {
		t.Errorf("rewritten: metadata %v, want %v", f.Meta, meta)
	}
	for name, w := range want {
		sameTensor(t, name, f.Tensors[name], w)
	}
	changed := bytes.Replace(h, []byte(`"12"`), []byte(`"13"`), 1)
	if _, err := loadDamaged(t, p, raw(string(changed), data...), true, "step changed"); !errors.Is(err, ErrChecksum) ||
		!strings.Contains(err.Error(), "checksum mismatch: the header's tensor names, dtypes, shapes and metadata give") {
		t.Errorf("a changed metadata value: %v", err)
	}
	data[len(data)-1] ^= 1
	if _, err := loadDamaged(t, p, raw(string(h), data...), true, "data changed"); !errors.Is(err, ErrChecksum) {
		t.Errorf("a changed tensor: %v", err)
	}
}

// holds reports whether m holds every key and value of sub.
func holds(m, sub map[string]string) bool {
	for k, v := range sub {
		if w, ok := m[k]; !ok || w != v {
			return false
		}
	}
	return true
}
