package mnist

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// IDX magic numbers: two zero bytes, the element type (0x08: unsigned
// bytes) and the number of dimensions.
const (
	imagesMagic = 0x00000803 // ubyte, 3 dimensions: n, rows, cols
	labelsMagic = 0x00000801 // ubyte, 1 dimension: n
)

// Decode reads one data set from an IDX images stream and the matching
// IDX labels stream, each gzip-compressed or not; imagesName and
// labelsName name them in errors. Both headers are checked, and the
// counts compared, before any data is read.
func Decode(images io.Reader, imagesName string, labels io.Reader, labelsName string) (*Set, error) {
	img, err := openIDX(images, imagesName)
	if err != nil {
		return nil, err
	}
	lab, err := openIDX(labels, labelsName)
	if err != nil {
		return nil, err
	}
	idims, err := readHeader(img, imagesName, imagesMagic)
	if err != nil {
		return nil, err
	}
	ldims, err := readHeader(lab, labelsName, labelsMagic)
	if err != nil {
		return nil, err
	}
	n, rows, cols := idims[0], idims[1], idims[2]
	if err := checkCount(imagesName, n, "images"); err != nil {
		return nil, err
	}
	if rows != Rows || cols != Cols {
		return nil, formatErr(imagesName, "images are %d×%d pixels; this program needs %d×%d", int32(rows), int32(cols), Rows, Cols)
	}
	if err := checkCount(labelsName, ldims[0], "labels"); err != nil {
		return nil, err
	}
	if ldims[0] != n {
		return nil, formatErr(labelsName, "holds %d labels but %s holds %d images", ldims[0], imagesName, n)
	}
	lb, err := readBody(lab, labelsName, int(n), 1, "labels")
	if err != nil {
		return nil, err
	}
	for i, l := range lb {
		if l >= Classes {
			return nil, formatErr(labelsName, "label %d of image %d is not a digit 0–9", l, i)
		}
	}
	px, err := readBody(img, imagesName, int(n), ImageSize, "images")
	if err != nil {
		return nil, err
	}
	s := &Set{Pixels: make([]float32, len(px)), Labels: make([]int32, len(lb))}
	for i, b := range px {
		s.Pixels[i] = float32(b) / 255
	}
	for i, l := range lb {
		s.Labels[i] = int32(l)
	}
	return s, nil
}

// openIDX returns a reader of the IDX bytes of r: r itself, or its
// decompressed content when it starts with the gzip magic (an IDX file
// starts with two zero bytes, so the two cannot be confused).
func openIDX(r io.Reader, name string) (io.Reader, error) {
	br := bufio.NewReader(r)
	head, err := br.Peek(2)
	if len(head) < 2 {
		if err == io.EOF || err == nil {
			return nil, formatErr(name, "file is empty or shorter than an IDX header")
		}
		return nil, fmt.Errorf("mnist: reading %s: %w", name, err)
	}
	if head[0] != 0x1f || head[1] != 0x8b {
		return br, nil
	}
	z, err := gzip.NewReader(br)
	if err != nil {
		return nil, readErr(name, err)
	}
	z.Multistream(false)
	return &gzipStream{z: z, src: br}, nil
}

// errTrailing reports bytes after a gzip stream that do not start another
// gzip member.
var errTrailing = errors.New("bytes after the end of the gzip stream are not gzip data")

// gzipStream reads a gzip file of one or more members, as gzip.Reader in
// multistream mode does, but tells a truncated member (io.ErrUnexpectedEOF)
// from garbage after the last one (errTrailing).
type gzipStream struct {
	z   *gzip.Reader
	src *bufio.Reader
}

func (g *gzipStream) Read(p []byte) (int, error) {
	for {
		n, err := g.z.Read(p)
		if err != io.EOF {
			return n, err
		}
		if _, perr := g.src.Peek(1); perr == io.EOF {
			return n, io.EOF
		}
		if rerr := g.z.Reset(g.src); rerr != nil {
			return n, fmt.Errorf("%w (%v)", errTrailing, rerr)
		}
		g.z.Multistream(false)
		if n > 0 {
			return n, nil
		}
	}
}

// readHeader reads and checks the magic number and returns the dimensions
// (one per dimension the magic announces).
func readHeader(r io.Reader, name string, magic uint32) ([]uint32, error) {
	ndims := int(magic & 0xff)
	buf := make([]byte, 4*(1+ndims))
	if _, err := io.ReadFull(r, buf[:4]); err != nil {
		return nil, readErr(name, err)
	}
	if got := binary.BigEndian.Uint32(buf); got != magic {
		what := "an MNIST images file"
		if magic == labelsMagic {
			what = "an MNIST labels file"
		}
		return nil, formatErr(name, "not %s: magic number 0x%08x, want 0x%08x (IDX of unsigned bytes, %d dimensions)", what, got, magic, ndims)
	}
	if _, err := io.ReadFull(r, buf[4:]); err != nil {
		return nil, readErr(name, err)
	}
	dims := make([]uint32, ndims)
	for i := range dims {
		dims[i] = binary.BigEndian.Uint32(buf[4*(i+1):])
	}
	return dims, nil
}

// checkCount checks the count of a header: positive, at most MaxImages.
// (IDX dimensions are signed 32-bit integers in practice; a count with the
// top bit set is reported as the negative number it is.)
func checkCount(name string, n uint32, what string) error {
	switch {
	case int32(n) < 0:
		return formatErr(name, "header claims %d %s", int32(n), what)
	case n == 0:
		return formatErr(name, "holds no %s", what)
	case n > MaxImages:
		return formatErr(name, "header claims %d %s, more than the %d this loader accepts", n, what, MaxImages)
	}
	return nil
}

// readBody reads exactly n items of size bytes and checks that nothing
// follows them. The buffer grows with the data actually read, so a header that
// lies about its count costs no more memory than the file holds.
func readBody(r io.Reader, name string, n, size int, what string) ([]byte, error) {
	want := int64(n) * int64(size)
	buf, err := io.ReadAll(io.LimitReader(r, want+1))
	if err != nil {
		return nil, readErr(name, err)
	}
	switch got := int64(len(buf)); {
	case got < want:
		return nil, formatErr(name, "truncated: header says %d %s (%d bytes of data) but the file holds %d bytes", n, what, want, got)
	case got > want:
		return nil, formatErr(name, "holds more data than the %d %s its header announces", n, what)
	}
	// Exactly want bytes means the stream reached its end, where a gzip
	// reader verifies its checksum (a mismatch is ReadAll's error above).
	return buf, nil
}

// readErr turns an error reading name into a FormatError when it says the
// contents are bad (truncated file, corrupt gzip stream), or else an error
// naming the file.
func readErr(name string, err error) error {
	var corrupt flate.CorruptInputError
	switch {
	case errors.Is(err, errTrailing):
		return formatErr(name, "corrupt gzip stream: %v", err)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return formatErr(name, "truncated: the file ends inside its header or data")
	case errors.Is(err, gzip.ErrHeader), errors.Is(err, gzip.ErrChecksum), errors.As(err, &corrupt):
		return formatErr(name, "corrupt gzip stream: %v", err)
	}
	return fmt.Errorf("mnist: reading %s: %w", name, err)
}

// writeFile writes the images (imgs) or the labels of s, gzip-compressed,
// to path.
func writeFile(path string, s *Set, imgs bool) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	z := gzip.NewWriter(f)
	n := uint32(len(s.Labels))
	if imgs {
		px := make([]byte, len(s.Pixels))
		for i, p := range s.Pixels {
			px[i] = byte(math.Round(float64(p) * 255))
		}
		err = writeIDX(z, imagesMagic, []uint32{n, Rows, Cols}, px)
	} else {
		lb := make([]byte, len(s.Labels))
		for i, l := range s.Labels {
			lb[i] = byte(l)
		}
		err = writeIDX(z, labelsMagic, []uint32{n}, lb)
	}
	if err != nil {
		return err
	}
	return z.Close()
}

// writeIDX writes an IDX header (magic, then each dimension, big-endian)
// and data. It writes whatever it is given, consistent or not.
func writeIDX(w io.Writer, magic uint32, dims []uint32, data []byte) error {
	buf := binary.BigEndian.AppendUint32(nil, magic)
	for _, d := range dims {
		buf = binary.BigEndian.AppendUint32(buf, d)
	}
	if _, err := w.Write(buf); err != nil {
		return err
	}
	_, err := w.Write(data)
	return err
}
