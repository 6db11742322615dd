package bench

import (
	"fmt"
	"testing"
	"time"

	"github.com/tessera-ml/tessera/device"
	"github.com/tessera-ml/tessera/tensor"
)

func TestZZFusionCounts(t *testing.T) {
	dev, err := tensor.TestGPU()
	if err != nil {
		t.Skip(err)
	}
	g, _ := tensor.GPUDevice(dev)
	for _, on := range []bool{false, true} {
		tensor.SetFusion(on)
		for _, w := range []*Workload{&mlpStep, &mincharStep} {
			c := w.Setup(dev, w.Sizes[0])
			c.Step()
			tensor.Sync(dev)
			device.DebugLabels = map[string]int{}
			d0, c0 := g.DispatchCount(), tensor.ReadCounters()
			st := time.Now()
			c.Step()
			tensor.Sync(dev)
			el := time.Since(st)
			d1, c1 := g.DispatchCount(), tensor.ReadCounters()
			fmt.Printf("fusion=%v %s: dispatches %d, storage bytes %d (%d storages), fused kernels %d ops %d, %v\n", on, w.Name, d1-d0, c1.StorageBytes-c0.StorageBytes, c1.Storages-c0.Storages, c1.FusedKernels-c0.FusedKernels, c1.FusedOps-c0.FusedOps, el)
			fmt.Println(device.DebugLabels)
			device.DebugLabels = nil
			c.Release()
		}
	}
}
