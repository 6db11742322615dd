package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/tessera-ml/tessera/device"
	"github.com/tessera-ml/tessera/tensor"
)

// devices prints the adapter list, the default device and the GPU and
// CPU budgets, with the limit that set the CPU one. It
// takes no flags or arguments.
func devices(args []string, stdout io.Writer) error {
	if err := parseFlags(flag.NewFlagSet("devices", flag.ContinueOnError), args, stdout); err != nil {
		return err
	}
	adapters, err := device.Adapters()
	switch {
	case errors.Is(err, device.ErrNotCompiled):
		fmt.Fprintln(stdout, "GPU support was not compiled in (built with CGO_ENABLED=0)")
	case err != nil:
		fmt.Fprintln(stdout, "no WebGPU adapter:", err)
	case len(adapters) == 0:
		fmt.Fprintln(stdout, "no WebGPU adapter found")
	}
	for _, a := range adapters {
		fmt.Fprintln(stdout, " ", a)
	}
	opts, err := device.OptionsFromEnv()
	if err != nil {
		return err
	}
	budget := opts.Budget
	if budget == 0 {
		budget = device.DefaultBudget
	}
	fmt.Fprintf(stdout, "GPU memory budget: %s (set TESSERA_GPU_BUDGET to change it; WebGPU cannot report free memory)\n", device.FormatBytes(budget))
	cpu, err := tensor.CPUBudgetInfo()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "CPU memory budget: %v (set %s to change it)\n", cpu, tensor.CPUBudgetEnv)
	dev, notice, err := tensor.DefaultDevice()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "default device: %v — %s\n", dev, notice)
	return nil
}
