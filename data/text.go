package data

import (
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tessera-ml/tessera/tensor"
)

// A Corpus is text read as bytes, the symbols of a byte-level language
// model (Karpathy's char-rnn read the Linux sources this way).
type Corpus struct {
	Bytes []byte   // the files' contents, one after another
	Files []string // the files read, in the order of Bytes
}

// ReadCorpus reads path: a file, whole, or a folder, walked in lexical
// order (filepath.WalkDir's, so the corpus is the same on every machine)
// for the regular files whose base name matches pattern (filepath.Match
// syntax, such as "*.go"; "" matches every file), concatenated. Symbolic
// links are not followed, except
// path itself. Errors are *FileError values: a path that does
// not exist or cannot be read (wrapping the fs error), a malformed
// pattern (ErrFormat), no matching file or no byte at all (ErrEmpty).
//
//	goSrc, err := data.ReadCorpus(filepath.Join(runtime.GOROOT(), "src"), "*.go")
func ReadCorpus(path, pattern string) (*Corpus, error) {
	const op = "ReadCorpus"
	if _, err := filepath.Match(pattern, ""); err != nil {
		return nil, fileErr(op, path, 0, ErrFormat, "pattern %q: %v", pattern, err)
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, &FileError{Op: op, Path: path, Err: err}
	}
	root := path
	if info.IsDir() {
		// Walk the folder a link names; links inside it are not followed.
		if root, err = filepath.EvalSymlinks(path); err != nil {
			return nil, &FileError{Op: op, Path: path, Err: err}
		}
	}
	c := &Corpus{}
	if !info.IsDir() {
		c.Files = []string{path}
	} else {
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.Type().IsRegular() {
				return nil
			}
			if ok, _ := filepath.Match(pattern, d.Name()); ok || pattern == "" {
				c.Files = append(c.Files, p)
			}
			return nil
		})
		if err != nil {
			return nil, &FileError{Op: op, Path: path, Err: err}
		}
		if len(c.Files) == 0 {
			return nil, fileErr(op, path, 0, ErrEmpty, "no file matches %q", pattern)
		}
	}
	for _, f := range c.Files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, &FileError{Op: op, Path: f, Err: err}
		}
		c.Bytes = append(c.Bytes, b...)
	}
	if len(c.Bytes) == 0 {
		return nil, fileErr(op, path, 0, ErrEmpty, "the %d file(s) read hold no bytes", len(c.Files))
	}
	return c, nil
}

// Split returns the first fraction frac of the corpus's bytes (rounded
// down, as nanoGPT's int(0.9*n)) for training and the rest for
// validation; Split(0.9) is Karpathy's 90/10 split. The slices share the
// corpus's memory. It panics with a *tensor.Error wrapping ErrArgument
// unless 0 < frac < 1.
func (c *Corpus) Split(frac float64) (train, val []byte) {
	if !(frac > 0 && frac < 1) {
		panic(argErr("Corpus.Split", tensor.ErrArgument, "fraction %v is not strictly between 0 and 1", frac))
	}
	n := int(frac * float64(len(c.Bytes)))
	return c.Bytes[:n:n], c.Bytes[n:]
}

// TextWindows is a Dataset of windows of a byte sequence: example i is
// the Length bytes from i·Stride as input and the Length bytes after
// each of them as target, both int32 [Length] holding byte values 0–255
// (the next-symbol task of char-rnn and nanoGPT).
type TextWindows struct {
	seq            []byte
	length, stride int
}

// NewTextWindows returns the windows of length bytes of seq, starting
// every stride bytes: stride = length cuts seq into disjoint windows (as
// char-rnn cuts its data), stride 1 takes every window (as nanoGPT's
// random offsets may). Mind that a shuffling Loader draws a permutation
// of all windows each epoch, 8 bytes and a few nanoseconds a window:
// stride 1 over the Go sources (81 million windows) costs 650 MB and
// about 8 s per epoch, stride 256 a 256th of that. It returns a *tensor.Error wrapping
// ErrArgument when length or stride is below 1 or seq is shorter than
// length+1 bytes (one window and its targets).
func NewTextWindows(seq []byte, length, stride int) (*TextWindows, error) {
	switch {
	case length < 1 || stride < 1:
		return nil, argErr("NewTextWindows", tensor.ErrArgument, "window length %d and stride %d must be at least 1", length, stride)
	case len(seq) < length+1:
		return nil, argErr("NewTextWindows", tensor.ErrArgument, "a sequence of %d bytes is too short for one window of %d and its targets", len(seq), length)
	}
	return &TextWindows{seq: seq, length: length, stride: stride}, nil
}

// Len returns the number of windows: those that fit, with their targets,
// in the sequence.
func (w *TextWindows) Len() int { return (len(w.seq)-w.length-1)/w.stride + 1 }

// Fields returns the input and the target, int32 [Length] each.
func (w *TextWindows) Fields() []Field {
	return []Field{{tensor.Int32, []int{w.length}}, {tensor.Int32, []int{w.length}}}
}

// Gather writes the inputs (f = 0) or targets (f = 1) of windows idx.
func (w *TextWindows) Gather(f int, idx []int, dst any) {
	out := dst.([]int32)
	for k, i := range idx {
		src := w.seq[i*w.stride+f:][:w.length]
		for j, b := range src {
			out[k*w.length+j] = int32(b)
		}
	}
}
