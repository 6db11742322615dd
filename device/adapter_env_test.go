//go:build cgo

package device

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/internal/devtest/gpuleaf"
)

// adaptersChildEnv marks the re-executed test binary that enumerates the
// adapters for TestAdaptersQuietWithoutRuntimeDir.
const adaptersChildEnv = "TESSERA_TEST_ADAPTERS_CHILD"

// TestAdaptersChild is the child process of
// TestAdaptersQuietWithoutRuntimeDir: it enumerates the adapters and
// prints how many it found and what XDG_RUNTIME_DIR is afterwards.
func TestAdaptersChild(t *testing.T) {
	if os.Getenv(adaptersChildEnv) != "1" {
		t.Skip("child process of TestAdaptersQuietWithoutRuntimeDir")
	}
	infos, err := Adapters()
	xdg, set := os.LookupEnv(runtimeDirEnv)
	fmt.Printf("adapters=%d err=%v xdg-set=%v xdg=%q\n", len(infos), err, set, xdg)
}

// TestAdaptersQuietWithoutRuntimeDir enumerates the adapters in a fresh
// process (enumeration happens once per process) with XDG_RUNTIME_DIR
// unset, empty, relative and valid, and checks that nothing but the test's
// own output reaches stderr — Mesa's device-selection layer made
// libwayland print "error: XDG_RUNTIME_DIR is invalid or not set in the
// environment." four times — and that the variable is as it was.
func TestAdaptersQuietWithoutRuntimeDir(t *testing.T) {
	valid := t.TempDir()
	cases := []struct {
		name string
		set  bool
		val  string
	}{
		{"unset", false, ""},
		{"empty", true, ""},
		{"relative", true, "run/user"},
		{"valid", true, valid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestAdaptersChild$", "-test.count=1")
			var env []string
			for _, kv := range os.Environ() {
				if !strings.HasPrefix(kv, runtimeDirEnv+"=") {
					env = append(env, kv)
				}
			}
			env = append(env, adaptersChildEnv+"=1")
			if c.set {
				env = append(env, runtimeDirEnv+"="+c.val)
			}
			cmd.Env = env
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("child: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
			}
			if s := stderr.String(); s != "" {
				t.Errorf("stderr is not empty:\n%s", s)
			}
			out := stdout.String()
			want := fmt.Sprintf("xdg-set=%v xdg=%q", c.set, c.val)
			if !strings.Contains(out, want) {
				t.Errorf("after enumeration the child reports %q, want XDG_RUNTIME_DIR as it was (%s)", out, want)
			}
			if gpuleaf.Required() && (strings.Contains(out, "adapters=0 ") || !strings.Contains(out, "err=<nil>")) {
				t.Errorf("TESSERA_REQUIRE_GPU=1 but the child enumerated no adapter: %s", out)
			}
		})
	}
}
