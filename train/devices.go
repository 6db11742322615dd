package train

import (
	"fmt"
	"strings"

	"github.com/tessera-ml/tessera/tensor"
)

// The devices of one process's ranks. -device gpu:0,gpu:1 trains one
// rank per device listed, as mpirun's ranks would, through the same
// ddp.Replica: gradients meet in host memory, where their mean is taken
// in float64 in rank order, so every rank gets the same bits. The ranks
// stay bitwise equal only when their optimizer steps round alike too,
// which holds for devices that run the same kernels: the CPU, or GPUs
// of one kind of adapter (the logical GPUs of one, TESSERA_LOGICAL_GPUS,
// or identical cards on one driver). The CPU's and a GPU's kernels
// round apart (measured: the ranks of gpu:0,cpu differed after the
// first step of each of mnist-mlp, mnist-cnn, lstm and gpt), and so may
// two kinds of adapter (WGSL leaves the precision of sqrt and division,
// which Adam's step takes, to the driver), so such lists are refused
// rather than left to drift.

// parseDevices parses -device: one device (cpu, gpu, gpu:N; default is
// parsed elsewhere) or a comma-separated list of them, one per rank of
// this process. A list names the CPU alone, possibly repeated (ranks
// that share its cores: as fast as one, for checking), or GPUs, each
// once. Every mistake is a UsageError.
func parseDevices(s string) ([]tensor.Device, error) {
	if !strings.Contains(s, ",") {
		d, err := tensor.ParseDevice(s)
		if err != nil {
			return nil, usagef("-device %q: want cpu, gpu, gpu:N or default", s)
		}
		return []tensor.Device{d}, nil
	}
	var devs []tensor.Device
	seen := map[tensor.Device]string{}
	for _, name := range strings.Split(s, ",") {
		d, err := tensor.ParseDevice(name)
		if err != nil {
			return nil, usagef("-device %q: %q is not a device: want a list of devices, one per rank, such as gpu:0,gpu:1", s, strings.TrimSpace(name))
		}
		if first, ok := seen[d]; ok && d.Kind == tensor.KindGPU {
			return nil, usagef("-device %q: %s is named twice (as %q and %q): each GPU serves one rank (%s=2 offers each adapter as two GPUs)",
				s, d, first, strings.TrimSpace(name), tensor.LogicalGPUsEnv)
		}
		seen[d] = strings.TrimSpace(name)
		if len(devs) > 0 && d.Kind != devs[0].Kind {
			return nil, usagef("-device %q mixes the CPU and GPUs: their optimizer steps round differently, so the ranks would drift apart; list GPUs only, or the CPU only", s)
		}
		devs = append(devs, d)
	}
	return devs, nil
}

// sameAdapters checks that the GPUs of devs open and are of one kind of
// adapter (name, driver and backend), whose kernels round alike; -device
// was list.
func sameAdapters(list string, devs []tensor.Device) error {
	var first tensor.Device
	var firstInfo string
	for _, d := range devs {
		if d.Kind != tensor.KindGPU {
			continue
		}
		g, err := tensor.GPUDevice(d)
		if err != nil {
			return fmt.Errorf("-device %q: %w", list, err)
		}
		a := g.Info()
		info := fmt.Sprintf("%s, %s, %s", a.Name, a.Driver, a.Backend)
		if firstInfo == "" {
			first, firstInfo = d, info
		} else if info != firstInfo {
			return usagef("-device %q: %s (%s) and %s (%s) are different kinds of adapter, whose kernels may round apart, so the ranks would drift apart; list GPUs of one kind", list, first, firstInfo, d, info)
		}
	}
	return nil
}

// deviceList renders devs as -device takes them: gpu:0,gpu:1.
func deviceList(devs []tensor.Device) string {
	names := make([]string, len(devs))
	for i, d := range devs {
		names[i] = d.String()
	}
	return strings.Join(names, ",")
}
