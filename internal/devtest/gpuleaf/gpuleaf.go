// Package gpuleaf decides, for the tests of every package, what a test
// does when no GPU opens: it skips, or fails when TESSERA_REQUIRE_GPU=1,
// as in CI, so that a runner without an adapter cannot pass silently.
//
// It imports nothing from the module, so the in-package tests of the
// leaves can use it: device's own tests (which cannot import a package
// that imports device) call Check after opening a device with their
// options, and the tests of kernels/wgsl share one device through Shared.
// internal/devtest builds the tensor-level helpers on it.
package gpuleaf

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
)

// Required reports whether TESSERA_REQUIRE_GPU=1: tests that find no GPU
// then fail instead of skipping.
func Required() bool { return os.Getenv("TESSERA_REQUIRE_GPU") == "1" }

// Check ends the test when err, why opening a GPU failed, is not nil. An
// err that is one of absent (by errors.Is: the errors meaning no GPU is
// here, such as device.ErrNoAdapter and device.ErrNotCompiled) skips the
// test, unless Required; any other err fails it, since then a GPU is
// there and opening it broke.
func Check(tb testing.TB, err error, absent ...error) {
	tb.Helper()
	if err == nil {
		return
	}
	if !isAny(err, absent) {
		tb.Fatalf("opening the GPU: %v", err)
		return
	}
	if Required() {
		tb.Fatalf("TESSERA_REQUIRE_GPU=1 but no GPU opens: %v", err)
		return
	}
	tb.Skipf("no GPU: %v", err)
}

func isAny(err error, targets []error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}

// A Shared is one GPU (or anything opened and closed) that every test of
// a process shares: opening lavapipe costs more than most kernels.
type Shared[T interface{ Close() error }] struct {
	open   func() (T, error)
	absent []error
	once   sync.Once
	v      T
	err    error
	opened bool
}

// NewShared returns a Shared that opens with open on first use; absent
// are the errors that mean no GPU is here (see Check).
func NewShared[T interface{ Close() error }](open func() (T, error), absent ...error) *Shared[T] {
	return &Shared[T]{open: open, absent: absent}
}

// Get returns the shared value, opening it on the first call of the
// process. When it does not open, Check ends the test (skip, or fail).
func (s *Shared[T]) Get(tb testing.TB) T {
	tb.Helper()
	s.once.Do(func() {
		s.v, s.err = s.open()
		s.opened = s.err == nil
	})
	Check(tb, s.err, s.absent...)
	return s.v
}

// Close closes the value if it opened. Call it once the tests are done.
func (s *Shared[T]) Close() error {
	if !s.opened {
		return nil
	}
	s.opened = false
	return s.v.Close()
}

// Main runs the tests, then closes the value, and returns the exit code
// for os.Exit: 1 when closing fails. A package's TestMain is
//
//	func TestMain(m *testing.M) { os.Exit(shared.Main(m)) }
func (s *Shared[T]) Main(m *testing.M) int {
	code := m.Run()
	if err := s.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "closing the shared GPU:", err)
		code = 1
	}
	return code
}
