package main

import (
	"errors"
	"fmt"

	"github.com/tessera-ml/tessera/device"
	"github.com/tessera-ml/tessera/tensor"
)

// devices prints the adapter list, the default device and the budget.
func devices() error {
	adapters, err := device.Adapters()
	switch {
	case errors.Is(err, device.ErrNotCompiled):
		fmt.Println("GPU support was not compiled in (built with CGO_ENABLED=0)")
	case err != nil:
		fmt.Println("no WebGPU adapter:", err)
	case len(adapters) == 0:
		fmt.Println("no WebGPU adapter found")
	}
	for _, a := range adapters {
		fmt.Println(" ", a)
	}
	opts, err := device.OptionsFromEnv()
	if err != nil {
		return err
	}
	budget := opts.Budget
	if budget == 0 {
		budget = device.DefaultBudget
	}
	fmt.Printf("GPU memory budget: %s (set TESSERA_GPU_BUDGET to change it; WebGPU cannot report free memory)\n", device.FormatBytes(budget))
	dev, notice, err := tensor.DefaultDevice()
	if err != nil {
		return err
	}
	fmt.Printf("default device: %v — %s\n", dev, notice)
	return nil
}
