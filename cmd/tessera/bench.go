package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/tessera-ml/tessera/bench"
	"github.com/tessera-ml/tessera/tensor"
)

// benchFlags are the flags of tessera bench.
type benchFlags struct {
	quick, torch, progress bool
	rounds, threads        int
	minTime                time.Duration
	workloads, devices     string
	out, python            string
}

// parseBench parses and checks the flags of bench and turns them into a
// bench.Config and the output directory.
func parseBench(args []string, stdout io.Writer) (bench.Config, string, error) {
	var f benchFlags
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.BoolVar(&f.quick, "quick", false, "small sizes and short measurements, for CI (default 2 rounds of 20ms measurements)")
	fs.BoolVar(&f.torch, "torch", false, "also run PyTorch and NumPy versions of the workloads, interleaved with Tessera's, and print Tessera/peer ratios; installs libopenblas0-pthread with apt-get when PyTorch loads Debian's reference BLAS, and refuses to compare against a reference BLAS")
	fs.IntVar(&f.rounds, "rounds", 0, "rounds over every case (default 5, 2 with -quick; at least 5 with -torch)")
	fs.DurationVar(&f.minTime, "min-time", 0, "least time per measurement (default 250ms, 20ms with -quick)")
	fs.StringVar(&f.workloads, "workloads", "all", "comma-separated workloads: "+strings.Join(workloadNames(), ", "))
	fs.StringVar(&f.devices, "devices", "all", "comma-separated devices (cpu, gpu:N); all: the CPU and every WebGPU adapter")
	fs.StringVar(&f.out, "out", "bench-out", "directory for bench.json and the PNG charts")
	fs.StringVar(&f.python, "python", "/usr/bin/python3", "Python interpreter with torch and numpy, for -torch")
	fs.IntVar(&f.threads, "threads", runtime.GOMAXPROCS(0), "threads for Tessera's CPU kernels (GOMAXPROCS) and the peers' torch and OpenBLAS")
	fs.BoolVar(&f.progress, "progress", true, "print a line per measurement on stderr")
	if err := parseFlags(fs, args, stdout); err != nil {
		return bench.Config{}, "", err
	}
	cfg := bench.Config{Quick: f.quick, Torch: f.torch, Python: f.python, Threads: f.threads, Rounds: f.rounds, MinTime: f.minTime}
	if cfg.Rounds == 0 {
		cfg.Rounds = 5
		if f.quick && !f.torch {
			cfg.Rounds = 2
		}
	}
	if cfg.MinTime == 0 {
		cfg.MinTime = 250 * time.Millisecond
		if f.quick {
			cfg.MinTime = 20 * time.Millisecond
		}
	}
	switch {
	case cfg.Rounds < 1:
		return cfg, "", usagef("-rounds must be at least 1, got %d", cfg.Rounds)
	case f.torch && cfg.Rounds < 5:
		return cfg, "", usagef("-rounds must be at least 5 with -torch (ratios are medians over rounds), got %d", cfg.Rounds)
	case cfg.MinTime < 0:
		return cfg, "", usagef("-min-time must be positive, got %v", cfg.MinTime)
	case f.threads < 1:
		return cfg, "", usagef("-threads must be at least 1, got %d", f.threads)
	case f.out == "":
		return cfg, "", usagef("-out must name a directory")
	}
	ws, err := bench.Select(f.workloads)
	if err != nil {
		return cfg, "", usagef("-workloads: %v", err)
	}
	cfg.Workloads = ws
	if f.devices != "all" {
		for d := range strings.SplitSeq(f.devices, ",") {
			dev, err := tensor.ParseDevice(d)
			if err != nil {
				msg := err.Error()
				if te, ok := errors.AsType[*tensor.Error](err); ok {
					msg = te.Detail
				}
				return cfg, "", usagef("-devices: %s", msg)
			}
			cfg.Devices = append(cfg.Devices, dev)
		}
	}
	if f.progress {
		cfg.Log = os.Stderr
	}
	return cfg, f.out, nil
}

func workloadNames() []string {
	var ns []string
	for _, w := range bench.Workloads() {
		ns = append(ns, w.Name)
	}
	return ns
}

// benchCmd runs the benchmark suite on every available device (or those
// asked for), prints a markdown table and writes bench.json and charts.
// A case that failed fails the command after the table is printed.
func benchCmd(args []string, stdout io.Writer) error {
	cfg, out, err := parseBench(args, stdout)
	if err != nil {
		return err
	}
	runtime.GOMAXPROCS(cfg.Threads)
	rep, err := bench.Run(cfg)
	if err != nil {
		return err
	}
	rep.WriteMarkdown(stdout)
	paths, err := rep.WriteFiles(out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nwrote %s\n", strings.Join(paths, ", "))
	var failed []string
	for _, r := range rep.Results {
		if r.Error != "" {
			failed = append(failed, fmt.Sprintf("%s %s on %s %s", r.Workload, r.Size, r.Impl, r.Device))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d case(s) failed: %s (see the table)", len(failed), strings.Join(failed, "; "))
	}
	return nil
}
