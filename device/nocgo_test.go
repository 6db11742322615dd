//go:build !cgo

package device

import (
	"errors"
	"testing"
)

func TestNotCompiled(t *testing.T) {
	if _, err := Open(Options{Index: -1}); !errors.Is(err, ErrNotCompiled) {
		t.Errorf("Open: %v", err)
	}
	if _, err := Adapters(); !errors.Is(err, ErrNotCompiled) {
		t.Errorf("Adapters: %v", err)
	}
}
