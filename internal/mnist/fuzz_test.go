package mnist

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

// FuzzDecode decodes arbitrary images and labels files (raw IDX or gzip)
// and checks that Decode never panics, that every error is one line
// naming one of the files and wrapping ErrFormat (reading from memory
// cannot fail otherwise), and that an accepted pair is a valid set that
// encodes back to what was read. The seed corpus is testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	f.Add(images(2), labels(2))
	f.Add(gz(images(1)), gz(labels(1)))
	f.Fuzz(func(t *testing.T, img, lab []byte) {
		s, err := Decode(bytes.NewReader(img), "images", bytes.NewReader(lab), "labels")
		if err != nil {
			msg := err.Error()
			if s != nil || !errors.Is(err, ErrFormat) || strings.Contains(msg, "\n") ||
				!(strings.HasPrefix(msg, "mnist: images: ") || strings.HasPrefix(msg, "mnist: labels: ")) {
				t.Fatalf("Decode returned set %v and error %q (%T)", s != nil, msg, err)
			}
			return
		}
		if err := s.Check(); err != nil {
			t.Fatalf("accepted an invalid set: %v", err)
		}
		px := make([]byte, len(s.Pixels))
		for i, p := range s.Pixels {
			px[i] = byte(math.Round(float64(p) * 255))
		}
		lb := make([]byte, len(s.Labels))
		for i, l := range s.Labels {
			lb[i] = byte(l)
		}
		n := uint32(s.Len())
		rimg, rlab := idx(imagesMagic, []uint32{n, Rows, Cols}, px), idx(labelsMagic, []uint32{n}, lb)
		if img[0] == 0 && !bytes.Equal(img, rimg) || lab[0] == 0 && !bytes.Equal(lab, rlab) {
			t.Fatalf("accepted raw files that are not exactly a header and %d images/labels", n)
		}
		again, err := Decode(bytes.NewReader(rimg), "images", bytes.NewReader(rlab), "labels")
		if err != nil || !reflect.DeepEqual(again, s) {
			t.Fatalf("re-encoded set does not decode to itself: %v", err)
		}
	})
}
