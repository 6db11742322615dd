package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/internal/mnist"
	"github.com/tessera-ml/tessera/tensor"
)

// asCommandEnv makes the test binary run as the tessera command (see
// TestMain), for tests that need a fresh process.
const asCommandEnv = "TESSERA_TEST_AS_COMMAND"

func TestMain(m *testing.M) {
	// Each adapter offered as two logical GPUs, so that -device
	// gpu:0,gpu:1 trains two ranks on one adapter, such as CI's lavapipe.
	devtest.LogicalGPUs(2)
	if os.Getenv(asCommandEnv) == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// runArgs runs the command in process and returns its exit status and
// output.
func runArgs(args ...string) (code int, stdout, stderr string) {
	var out, errOut strings.Builder
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// tinyMNIST writes a data set of 200 training and 50 test images to a
// temporary folder and points TESSERA_MNIST_DIR at it.
func tinyMNIST(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	if err := mnist.WriteDir(dir, mnist.Stripes(200), mnist.Stripes(50)); err != nil {
		t.Fatal(err)
	}
	t.Setenv(mnist.DirEnv, dir)
}

// wantOneLine checks that stderr is exactly one line that starts with
// prefix and contains each of parts.
func wantOneLine(t *testing.T, stderr, prefix string, parts ...string) {
	t.Helper()
	if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") || !strings.HasPrefix(stderr, prefix) {
		t.Errorf("stderr %q is not one line starting with %q", stderr, prefix)
	}
	for _, p := range parts {
		if !strings.Contains(stderr, p) {
			t.Errorf("stderr %q does not say %q", stderr, p)
		}
	}
}

// TestBadArguments runs the command with bad arguments: each is one line
// on stderr naming the problem and exit status 2, before any training.
func TestBadArguments(t *testing.T) {
	tinyMNIST(t)
	t.Setenv("TESSERA_DEVICE", "cpu")
	cases := []struct {
		args []string
		line string // what stderr says after "tessera"
	}{
		{nil, ": no command given"},
		{[]string{"frobnicate"}, `: unknown command "frobnicate"`},
		{[]string{"help", "train"}, ` help: unexpected argument "train"`},
		{[]string{"devices", "extra"}, ` devices: unexpected argument "extra"`},
		{[]string{"devices", "-v"}, " devices: flag provided but not defined: -v"},
		{[]string{"train", "stray"}, ` train: unknown program "stray" (run tessera train --help for the list)`},
		{[]string{"train", "-steps", "5", "stray"}, ` train: unexpected argument "stray"`},
		{[]string{"train", "-nosuchflag"}, " train: flag provided but not defined: -nosuchflag"},
		{[]string{"train", "-batch", "-5"}, " train: -batch must be at least 1, got -5"},
		{[]string{"train", "-batch", "0"}, " train: -batch must be at least 1, got 0"},
		{[]string{"train", "-batch", "201"}, " train: -batch must be between 1 and 200 (the training set has 200 images), got 201"},
		{[]string{"train", "-batch", "x"}, ` train: invalid value "x" for flag -batch`},
		{[]string{"train", "-steps", "-5"}, " train: -steps must be at least 1, got -5"},
		{[]string{"train", "-steps", "0"}, " train: -steps must be at least 1, got 0"},
		{[]string{"train", "-steps", "99999999999999999999"}, ` train: invalid value "99999999999999999999" for flag -steps: value out of range`},
		{[]string{"train", "-hidden", "-1"}, " train: -hidden must be at least 1, got -1"},
		{[]string{"train", "-hidden", "0"}, " train: -hidden must be at least 1, got 0"},
		{[]string{"train", "-hidden", "9223372036854775807"}, " train: -hidden must be between 1 and "},
		{[]string{"train", "-hidden", "1099511627776"}, "TESSERA_CPU_BUDGET) allows with -batch 128), got 1099511627776"},
		{[]string{"train", "-lr", "0"}, " train: -lr must be a positive finite number, got 0"},
		{[]string{"train", "-lr", "-0.1"}, " train: -lr must be a positive finite number, got -0.1"},
		{[]string{"train", "-lr", "NaN"}, " train: -lr must be a positive finite number, got NaN"},
		{[]string{"train", "-lr", "Inf"}, " train: -lr must be a positive finite number, got +Inf"},
		{[]string{"train", "-lr", "-Inf"}, " train: -lr must be a positive finite number, got -Inf"},
		{[]string{"train", "-lr", "1e999"}, ` train: invalid value "1e999" for flag -lr: value out of range`},
		{[]string{"train", "-seed", "-1"}, ` train: invalid value "-1" for flag -seed`},
		{[]string{"train", "mnist-mlp", "-hidden", "0"}, " train: -hidden and -layers must be at least 1"},
		{[]string{"train", "mnist-mlp", "-batch", "60001"}, " train: -batch must be at most the training set's 60000 images"},
		{[]string{"train", "charrnn", "-seq", "0"}, " train: -hidden and -seq must be at least 1"},
		{[]string{"train", "lstm", "-delay", "20"}, " train: want -hidden ≥ 1, -symbols ≥ 2, 0 ≤ -delay < -length"},
		{[]string{"train", "pong", "-gamma", "2"}, " train: -hidden and -frame-skip must be at least 1"},
		{[]string{"train", "timeseries", "-holdout", "1"}, " train: want -window ≥ 1, -hidden ≥ 1 and -holdout in (0, 1)"},
		{[]string{"train", "gpt", "-heads", "3"}, " train: -context, -width, -heads and -layers must be at least 1, -heads must divide -width"},
		{[]string{"train", "gpt", "-warmup", "5", "-steps", "5"}, " train: -warmup 5 must be shorter than the 5 steps"},
		{[]string{"train", "mnist-cnn", "-rotate", "181"}, " train: -rotate must lie in [0, 180], -scale in [0, 1), -shift in [0, 28]"},
		{[]string{"train", "mnist-cnn", "-width", "0"}, " train: -width must be at least 1"},
		{[]string{"train", "timeseries", "-window", "x"}, ` train: invalid value "x" for flag -window`},
		{[]string{"train", "lstm", "stray"}, ` train: unexpected argument "stray" (run tessera train lstm -h for the flags)`},
		{[]string{"train", "lstm", "-epochs", "1", "-steps", "2"}, " train: -steps and -epochs exclude each other"},
		{[]string{"train", "pong", "-epochs", "1"}, " train: -epochs: pong has no epochs; give -steps"},
	}
	for _, prog := range []string{"mnist-mlp", "charrnn", "lstm", "pong", "timeseries"} {
		cases = append(cases,
			struct {
				args []string
				line string
			}{[]string{"train", prog, "-steps", "0"}, " train: -steps must be at least 1, got 0"},
			struct {
				args []string
				line string
			}{[]string{"train", prog, "-lr", "NaN"}, " train: -lr must be a positive finite number, got NaN"},
			struct {
				args []string
				line string
			}{[]string{"train", prog, "-batch", "-1"}, " train: -batch must be at least 1, got -1"},
			struct {
				args []string
				line string
			}{[]string{"train", prog, "-device", "tpu"}, ` train: -device "tpu": want cpu, gpu, gpu:N or default`},
			struct {
				args []string
				line string
			}{[]string{"train", prog, "-plot", "x.jpg"}, ` train: -plot "x.jpg" must name a .png file`},
			struct {
				args []string
				line string
			}{[]string{"train", prog, "-resume", "/nonexistent.safetensors"}, ` train: -resume "/nonexistent.safetensors": no such checkpoint file`},
			struct {
				args []string
				line string
			}{[]string{"train", prog, "-checkpoint", "/nonexistent/c.safetensors"}, ` train: -checkpoint "/nonexistent/c.safetensors": the folder "/nonexistent" does not exist`},
			struct {
				args []string
				line string
			}{[]string{"train", prog, "-nosuchflag"}, " train: flag provided but not defined: -nosuchflag"},
		)
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			if strings.Contains(c.line, "-hidden must be between") && memTotal() == 0 {
				t.Skip("the machine's memory is unknown (no /proc/meminfo), so -hidden has no upper bound on the CPU")
			}
			code, stdout, stderr := runArgs(c.args...)
			if code != 2 {
				t.Errorf("exit status %d, want 2 (stdout %q)", code, stdout)
			}
			if strings.Contains(stdout, "training (") {
				t.Errorf("training started: %q", stdout)
			}
			wantOneLine(t, stderr, "tessera", c.line)
		})
	}
}

// TestMissingData runs a program on a file that does not exist: one
// line naming it, exit status 1 (a failure while running).
func TestMissingData(t *testing.T) {
	code, _, stderr := runArgs("train", "charrnn", "-device", "cpu", "-data", "/nonexistent/file.txt")
	if code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	wantOneLine(t, stderr, "tessera train: ", "/nonexistent/file.txt")
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}, {"train", "-h"}, {"devices", "-help"}} {
		code, stdout, stderr := runArgs(args...)
		if code != 0 || stderr != "" || !strings.Contains(stdout, "usage") {
			t.Errorf("%v: exit status %d, stdout %q, stderr %q; want 0 and the usage on stdout", args, code, stdout, stderr)
		}
	}
	if _, stdout, _ := runArgs("train", "-h"); !strings.Contains(stdout, "-hidden") {
		t.Errorf("train -h does not list -hidden: %q", stdout)
	}
	// tessera train --help lists the programs, one line each.
	_, stdout, _ := runArgs("train", "--help")
	for _, prog := range []string{"mnist-mlp", "charrnn", "lstm", "pong", "timeseries"} {
		if !regexp.MustCompile(`(?m)^  ` + prog + ` +\S.*$`).MatchString(stdout) {
			t.Errorf("train --help has no line for %s:\n%s", prog, stdout)
		}
		code, out, stderr := runArgs("train", prog, "-h")
		if code != 0 || stderr != "" || !strings.Contains(out, "usage: tessera train "+prog) || !strings.Contains(out, "-checkpoint") {
			t.Errorf("train %s -h: exit status %d, stdout %q, stderr %q", prog, code, out, stderr)
		}
	}
}

// TestPanicIsOneLine registers a command that misuses a tensor op: the
// *tensor.Error panic becomes one line and exit status 1, and so does
// any other panic, marked as an internal error when it is a bug.
func TestPanicIsOneLine(t *testing.T) {
	cases := map[string]struct {
		f    func()
		line []string
	}{
		"tensor": {func() { tensor.Ones([]int{2, 3}).MatMul(tensor.Ones([]int{2, 3})) },
			[]string{"tessera boom: tensor.MatMul: shape mismatch", "[2 3]"}},
		"error": {func() { panic(errors.New("disk on fire")) }, []string{"tessera boom: disk on fire"}},
		"bug": {func() { var s []int; _ = s[len(os.Args)+3] },
			[]string{"tessera boom: internal error (please report it): runtime error: index out of range"}},
		"value": {func() { panic(42) }, []string{"tessera boom: internal error (please report it): 42"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			commands["boom"] = func([]string, io.Writer) error { c.f(); return nil }
			defer delete(commands, "boom")
			code, _, stderr := runArgs("boom")
			if code != 1 {
				t.Errorf("exit status %d, want 1", code)
			}
			wantOneLine(t, stderr, "tessera boom: ", c.line...)
		})
	}
}

// TestDevicesQuiet runs `tessera devices` in a fresh process without
// XDG_RUNTIME_DIR, as on a headless machine, automatic and on the GPU
// adapter (lavapipe here): stderr must stay empty (Mesa printed "error:
// XDG_RUNTIME_DIR is invalid or not set in the environment." four times).
func TestDevicesQuiet(t *testing.T) {
	for _, dev := range []string{"auto", "gpu"} {
		cmd := exec.Command(os.Args[0], "devices")
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "XDG_RUNTIME_DIR=") && !strings.HasPrefix(kv, "TESSERA_DEVICE=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, asCommandEnv+"=1", "TESSERA_DEVICE="+dev)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if dev == "gpu" && err != nil && os.Getenv("TESSERA_REQUIRE_GPU") != "1" {
			t.Logf("TESSERA_DEVICE=gpu: %v: %s", err, stderr.String())
			continue
		}
		if err != nil || stderr.Len() != 0 || !strings.Contains(stdout.String(), "default device:") {
			t.Errorf("TESSERA_DEVICE=%s tessera devices: %v\nstdout:\n%s\nstderr:\n%s", dev, err, stdout.String(), stderr.String())
		}
	}
}
