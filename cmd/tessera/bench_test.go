package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchBadArguments: every bad flag of bench is one line on stderr
// and exit status 2, before anything is measured.
func TestBenchBadArguments(t *testing.T) {
	for _, c := range []struct {
		args []string
		line string
	}{
		{[]string{"bench", "stray"}, ` bench: unexpected argument "stray"`},
		{[]string{"bench", "-rounds", "-1"}, " bench: -rounds must be at least 1, got -1"},
		{[]string{"bench", "-torch", "-rounds", "4"}, " bench: -rounds must be at least 5 with -torch (ratios are medians over rounds), got 4"},
		{[]string{"bench", "-min-time", "-1s"}, " bench: -min-time must be positive, got -1s"},
		{[]string{"bench", "-min-time", "soon"}, ` bench: invalid value "soon" for flag -min-time`},
		{[]string{"bench", "-threads", "0"}, " bench: -threads must be at least 1, got 0"},
		{[]string{"bench", "-out", ""}, " bench: -out must name a directory"},
		{[]string{"bench", "-workloads", "gemm,conv9"}, ` bench: -workloads: unknown workload "conv9" (known: fma_peak, gemm, conv2d, mul_add,`},
		{[]string{"bench", "-devices", "cpu,tpu"}, ` bench: -devices: bad device "tpu": want cpu, gpu or gpu:N`},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, stdout, stderr := runArgs(c.args...)
			if code != 2 || stdout != "" {
				t.Errorf("exit status %d, stdout %q; want 2 and nothing measured", code, stdout)
			}
			wantOneLine(t, stderr, "tessera", c.line)
		})
	}
}

func TestBenchHelp(t *testing.T) {
	code, stdout, stderr := runArgs("bench", "-h")
	if code != 0 || stderr != "" {
		t.Fatalf("exit status %d, stderr %q", code, stderr)
	}
	for _, flag := range []string{"-quick", "-torch", "-rounds", "-workloads", "-devices", "-out", "-python", "-threads", "minchar_step"} {
		if !strings.Contains(stdout, flag) {
			t.Errorf("bench -h does not mention %s:\n%s", flag, stdout)
		}
	}
}

// TestBenchQuick runs two workloads for one short round on the CPU: the
// table goes to stdout, bench.json and the GEMM chart to -out.
func TestBenchQuick(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results")
	code, stdout, stderr := runArgs("bench", "-quick", "-workloads", "gemm,tiny_op", "-devices", "cpu", "-rounds", "1", "-min-time", "1ms", "-progress=false", "-out", out)
	if code != 0 || stderr != "" {
		t.Fatalf("exit status %d, stderr %q\n%s", code, stderr, stdout)
	}
	for _, want := range []string{"Machine: ", "| workload | size | impl | device |", "| gemm | 64 | tessera | cpu | ", "| tiny_op | 64 elements, 256 ops | tessera | cpu | ", " µs/op | ", "(heap)", "wrote " + filepath.Join(out, "bench.json")} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	var rep struct {
		Machine struct {
			Cores int `json:"cores"`
		} `json:"machine"`
		Results []struct {
			Workload string `json:"workload"`
		} `json:"results"`
	}
	b, err := os.ReadFile(filepath.Join(out, "bench.json"))
	if err != nil || json.Unmarshal(b, &rep) != nil || rep.Machine.Cores < 1 || len(rep.Results) != 4 {
		t.Errorf("bench.json: %v, %+v", err, rep)
	}
	if _, err := os.Stat(filepath.Join(out, "gemm.png")); err != nil {
		t.Error(err)
	}
}
