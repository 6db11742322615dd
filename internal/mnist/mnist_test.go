package mnist

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// idx returns an IDX file: header (magic, dims) and data, uncompressed.
func idx(magic uint32, dims []uint32, data []byte) []byte {
	var b bytes.Buffer
	if err := writeIDX(&b, magic, dims, data); err != nil {
		panic(err) // a bytes.Buffer does not fail
	}
	return b.Bytes()
}

// gz compresses b.
func gz(b []byte) []byte {
	var out bytes.Buffer
	z := gzip.NewWriter(&out)
	z.Write(b)
	z.Close()
	return out.Bytes()
}

// images returns an images file of n images whose pixel j of image i is
// (i+j) mod 256, and labels returns a labels file of n labels i mod 10.
func images(n int) []byte { return imagesDims(n, n, Rows, Cols, n*ImageSize) }

func imagesDims(n, hdr, rows, cols, size int) []byte {
	px := make([]byte, size)
	for i := range px {
		px[i] = byte(i/ImageSize + i%ImageSize)
	}
	return idx(imagesMagic, []uint32{uint32(hdr), uint32(rows), uint32(cols)}, px)
}

func labels(n int) []byte { return labelsN(n, n) }

func labelsN(hdr, n int) []byte {
	lb := make([]byte, n)
	for i := range lb {
		lb[i] = byte(i % 10)
	}
	return idx(labelsMagic, []uint32{uint32(hdr)}, lb)
}

// readPair writes the two files into a temporary folder and reads them.
func readPair(t *testing.T, img, lab []byte) (*Set, string, string, error) {
	t.Helper()
	dir := t.TempDir()
	ip, lp := filepath.Join(dir, "images.idx"), filepath.Join(dir, "labels.idx")
	if err := os.WriteFile(ip, img, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lp, lab, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := ReadFiles(ip, lp)
	return s, ip, lp, err
}

func TestReadValidRawAndGzip(t *testing.T) {
	for _, comp := range []string{"raw", "gzip", "two gzip members"} {
		img, lab := images(3), labels(3)
		switch comp {
		case "gzip":
			img, lab = gz(img), gz(lab)
		case "two gzip members": // as pigz or cat of two .gz files write
			img = append(gz(img[:100]), gz(img[100:])...)
		}
		s, _, _, err := readPair(t, img, lab)
		if err != nil {
			t.Fatalf("%s: %v", comp, err)
		}
		if s.Len() != 3 || len(s.Pixels) != 3*ImageSize {
			t.Fatalf("%s: %d images, %d pixels", comp, s.Len(), len(s.Pixels))
		}
		if !reflect.DeepEqual(s.Labels, []int32{0, 1, 2}) {
			t.Errorf("labels %v", s.Labels)
		}
		if got, want := s.Pixels[ImageSize+5], float32(6)/255; got != want {
			t.Errorf("pixel 5 of image 1 = %v, want %v", got, want)
		}
	}
}

// TestBadFiles checks that every malformed pair is an error naming the bad
// file and the problem, wrapping ErrFormat.
func TestBadFiles(t *testing.T) {
	good := images(4)
	corrupt := gz(good)
	corrupt[len(corrupt)/2] ^= 0xff
	badCRC := gz(good)
	badCRC[len(badCRC)-6] ^= 0xff // the CRC-32 in the gzip trailer
	withLabel := func(l byte) []byte { b := labels(4); b[len(b)-1] = l; return b }
	cases := []struct {
		name     string
		img, lab []byte
		badFile  string // "images" or "labels"
		problem  string
	}{
		{"empty images file", nil, labels(4), "images", "empty"},
		{"truncated images header", good[:10], labels(4), "images", "truncated"},
		{"labels file as images", labels(4), labels(4), "images", "not an MNIST images file: magic number 0x00000801"},
		{"images file as labels", good, good, "labels", "not an MNIST labels file: magic number 0x00000803"},
		{"negative image count", imagesDims(4, -5, 28, 28, 4*ImageSize), labels(4), "images", "header claims -5 images"},
		{"zero images", imagesDims(0, 0, 28, 28, 0), labels(0), "images", "holds no images"},
		{"zero labels", good, labelsN(0, 0), "labels", "holds no labels"},
		{"huge image count", imagesDims(1, 1<<31-1, 28, 28, ImageSize), labels(1), "images", "header claims 2147483647 images, more than"},
		{"27×28 images", imagesDims(4, 4, 27, 28, 4*27*28), labels(4), "images", "images are 27×28 pixels; this program needs 28×28"},
		{"29×28 images", imagesDims(4, 4, 29, 28, 4*29*28), labels(4), "images", "images are 29×28"},
		{"28×-1 images", imagesDims(4, 4, 28, -1, 4*ImageSize), labels(4), "images", "images are 28×-1"},
		{"fewer labels than images", good, labels(3), "labels", "holds 3 labels but"},
		{"more labels than images", good, labels(5), "labels", "holds 5 labels but"},
		{"labels truncated", good, labelsN(4, 3), "labels", "truncated: header says 4 labels (4 bytes of data) but the file holds 3 bytes"},
		{"labels with extra data", good, labelsN(4, 5), "labels", "holds more data than the 4 labels"},
		{"images truncated", imagesDims(4, 4, 28, 28, 4*ImageSize-1), labels(4), "images", "truncated: header says 4 images"},
		{"images with an extra image", imagesDims(5, 4, 28, 28, 5*ImageSize), labels(4), "images", "holds more data than the 4 images"},
		{"label 10", good, withLabel(10), "labels", "label 10 of image 3 is not a digit"},
		{"label 255", good, withLabel(255), "labels", "label 255 of image 3"},
		{"corrupt gzip", corrupt, labels(4), "images", "corrupt gzip stream"},
		{"gzip checksum mismatch", badCRC, labels(4), "images", "corrupt gzip stream"},
		{"truncated gzip", gz(good)[:200], labels(4), "images", "truncated"},
		{"garbage after the gzip stream", append(gz(good), "garbage!"...), labels(4), "images", "corrupt gzip stream"},
		{"gzip header only", []byte{0x1f, 0x8b, 8}, labels(4), "images", "truncated"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, ip, lp, err := readPair(t, c.img, c.lab)
			if err == nil {
				t.Fatalf("accepted: %d images", s.Len())
			}
			if s != nil {
				t.Errorf("returned a partial set of %d images with the error", s.Len())
			}
			file := map[string]string{"images": ip, "labels": lp}[c.badFile]
			var fe *FormatError
			if !errors.As(err, &fe) || !errors.Is(err, ErrFormat) || fe.File != file {
				t.Fatalf("error %q (%T) is not a FormatError about %s", err, err, file)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "mnist: "+file+": ") || !strings.Contains(msg, c.problem) || strings.Contains(msg, "\n") {
				t.Errorf("error %q, want one line naming %s and saying %q", msg, file, c.problem)
			}
		})
	}
}

// TestHugeCountDoesNotAllocate reads a header that claims MaxImages
// images followed by one image: the loader must report the truncation
// without allocating MaxImages·784 bytes first.
func TestHugeCountDoesNotAllocate(t *testing.T) {
	img := gz(imagesDims(1, MaxImages, 28, 28, ImageSize))
	lab := gz(labelsN(MaxImages, MaxImages))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, _, _, err := readPair(t, img, lab)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("err = %v, want a truncation error", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Errorf("allocated %d MiB for a file of one image", got>>20)
	}
}

func TestMissingFile(t *testing.T) {
	dir := t.TempDir()
	_, _, err := LoadDir(dir)
	if err == nil || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), filepath.Join(dir, TrainImagesFile)) {
		t.Fatalf("err = %v, want a not-exist error naming %s", err, TrainImagesFile)
	}
}

func TestWriteDirRoundTrip(t *testing.T) {
	train := &Set{Pixels: make([]float32, 5*ImageSize), Labels: []int32{3, 1, 4, 1, 5}}
	for i := range train.Pixels {
		train.Pixels[i] = float32(i%256) / 255
	}
	test := &Set{Pixels: train.Pixels[:2*ImageSize], Labels: []int32{9, 0}}
	dir := t.TempDir()
	if err := WriteDir(dir, train, test); err != nil {
		t.Fatal(err)
	}
	tr, te, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tr, train) || !reflect.DeepEqual(te, test) {
		t.Errorf("round trip changed the sets")
	}
	bad := []*Set{
		{},
		{Pixels: make([]float32, ImageSize), Labels: []int32{10}},
		{Pixels: make([]float32, ImageSize-1), Labels: []int32{1}},
		{Pixels: append(make([]float32, ImageSize-1), 2), Labels: []int32{1}},
	}
	for _, s := range bad {
		if err := WriteDir(t.TempDir(), s, test); err == nil {
			t.Errorf("WriteDir accepted a set of %d labels and %d pixels", len(s.Labels), len(s.Pixels))
		}
	}
}

// TestLoadMNIST reads the real files and checks their sizes and ranges.
func TestLoadMNIST(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 55 MB of MNIST")
	}
	train, test, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if train.Len() != 60000 || test.Len() != 10000 {
		t.Fatalf("%d training and %d test images, want 60000 and 10000", train.Len(), test.Len())
	}
	for _, s := range []*Set{train, test} {
		if err := s.Check(); err != nil {
			t.Error(err)
		}
	}
}
