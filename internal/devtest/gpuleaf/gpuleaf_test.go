package gpuleaf

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

var errAbsent = errors.New("no adapter")

// fakeTB records how Check ends a test.
type fakeTB struct {
	testing.TB
	skipped, failed string
}

func (f *fakeTB) Helper()                           {}
func (f *fakeTB) Skipf(format string, args ...any)  { f.skipped = fmt.Sprintf(format, args...) }
func (f *fakeTB) Fatalf(format string, args ...any) { f.failed = fmt.Sprintf(format, args...) }

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		err          error
		required     bool
		skips, fails bool
		message      string
	}{
		{nil, false, false, false, ""},
		{nil, true, false, false, ""},
		{errAbsent, false, true, false, "no adapter"},
		{fmt.Errorf("opening: %w", errAbsent), false, true, false, "opening: no adapter"},
		{errAbsent, true, false, true, "TESSERA_REQUIRE_GPU=1"},
		{errors.New("device request failed"), false, false, true, "device request failed"},
	} {
		req := ""
		if c.required {
			req = "1"
		}
		t.Setenv("TESSERA_REQUIRE_GPU", req)
		f := &fakeTB{}
		Check(f, c.err, errAbsent)
		msg := f.skipped + f.failed
		if (f.skipped != "") != c.skips || (f.failed != "") != c.fails || !strings.Contains(msg, c.message) {
			t.Errorf("Check(%v), required %v: skipped %q, failed %q", c.err, c.required, f.skipped, f.failed)
		}
	}
}

type closer struct{ closed int }

func (c *closer) Close() error { c.closed++; return nil }

func TestShared(t *testing.T) {
	t.Setenv("TESSERA_REQUIRE_GPU", "")
	opens := 0
	c := &closer{}
	s := NewShared(func() (*closer, error) { opens++; return c, nil }, errAbsent)
	if err := s.Close(); err != nil || c.closed != 0 {
		t.Fatalf("Close before opening: %v, %d closes", err, c.closed)
	}
	for range 3 {
		if got := s.Get(t); got != c {
			t.Fatal("Get returned another value")
		}
	}
	if err := s.Close(); opens != 1 || err != nil || c.closed != 1 {
		t.Fatalf("%d opens, Close %v, %d closes; want 1, nil, 1", opens, err, c.closed)
	}
	if err := s.Close(); err != nil || c.closed != 1 {
		t.Fatalf("second Close: %v, %d closes", err, c.closed)
	}

	failing := NewShared(func() (*closer, error) { opens++; return nil, errAbsent }, errAbsent)
	for range 2 {
		f := &fakeTB{}
		failing.Get(f)
		if f.skipped == "" {
			t.Fatalf("Get without a GPU: skipped %q, failed %q", f.skipped, f.failed)
		}
	}
	if opens != 2 {
		t.Errorf("a failed open was retried: %d opens", opens)
	}
	if err := failing.Close(); err != nil {
		t.Errorf("Close after a failed open: %v", err)
	}
}
