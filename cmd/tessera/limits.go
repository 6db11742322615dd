package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/tessera-ml/tessera/device"
	"github.com/tessera-ml/tessera/internal/mnist"
	"github.com/tessera-ml/tessera/tensor"
)

// evalChunk is the number of test images classified at once.
const evalChunk = 1000

// limits are what a device allows a training run.
type limits struct {
	memory     float64 // bytes training may use; +Inf when unknown
	memoryName string  // says what memory is, for messages
	binding    float64 // bytes of the largest tensor a matmul may read; +Inf on the CPU
}

// limitsOf returns the limits of dev: the allocator's budget and the
// storage binding limit of a GPU, the CPU budget for the CPU (the
// tightest of physical memory, a cgroup's limit, ulimit -v and -d:
// tensor.CPUBudgetInfo), or the machine's physical memory when that
// cannot be read.
func limitsOf(dev tensor.Device) limits {
	if dev.Kind == tensor.KindGPU {
		if g, err := tensor.GPUDevice(dev); err == nil {
			return limits{
				memory:     float64(g.Stats().Budget),
				memoryName: fmt.Sprintf("the GPU memory budget of %s (raise it with %s)", device.FormatBytes(g.Stats().Budget), device.BudgetEnv),
				binding:    float64(g.Caps().MaxStorageBindingSize),
			}
		}
	}
	l := limits{memory: math.Inf(1), binding: math.Inf(1)}
	if info, err := tensor.CPUBudgetInfo(); err == nil && info.Bytes > 0 {
		l.memory = float64(info.Bytes)
		l.memoryName = fmt.Sprintf("the CPU budget of %s, set by %s (raise it with %s)", device.FormatBytes(info.Bytes), info.Source, tensor.CPUBudgetEnv)
	} else if n := memTotal(); n > 0 {
		l.memory = float64(n)
		l.memoryName = fmt.Sprintf("the machine's %s of memory", device.FormatBytes(n))
	}
	return l
}

// memTotal returns the machine's physical memory in bytes from
// /proc/meminfo, or 0 when it cannot tell.
func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// MemTotal:       16318412 kB
		fields := strings.Fields(sc.Text())
		if len(fields) == 3 && fields[0] == "MemTotal:" && fields[2] == "kB" {
			if kb, err := strconv.ParseInt(fields[1], 10, 64); err == nil && kb > 0 && kb < math.MaxInt64>>10 {
				return kb << 10
			}
		}
	}
	return 0
}

// trainingBytes is a lower bound of the memory that training the
// 784→hidden→10 MLP with Adam needs: the parameters, their gradients and
// Adam's two moments (four times (784+1)·hidden + (hidden+1)·10 floats),
// and the input and hidden activations of m images, the larger of a
// training batch and an evaluation chunk. Computed in float64 so that no
// flag value overflows it.
func trainingBytes(m, hidden int) float64 {
	h := float64(hidden)
	params := (mnist.ImageSize+1)*h + (h+1)*mnist.Classes
	return 4 * (4*params + float64(m)*(mnist.ImageSize+h))
}

// maxBatch returns the largest batch the training set and the device
// allow, and the reason for that bound.
func maxBatch(l limits, trainLen int) (int, string) {
	byBinding := l.binding / (4 * mnist.ImageSize)
	if float64(trainLen) <= byBinding {
		return trainLen, fmt.Sprintf("the training set has %d images", trainLen)
	}
	return int(byBinding), fmt.Sprintf("a batch of %d-pixel images must fit the GPU's %s storage binding limit",
		mnist.ImageSize, device.FormatBytes(int64(l.binding)))
}

// maxHidden returns the largest hidden size for which trainingBytes(m, h)
// fits the device's memory and the hidden layer's weights and activations
// (hidden×784 and m×hidden floats) fit its binding limit, and the reason
// for that bound; 0 when not even one unit fits.
func maxHidden(l limits, m int) (int, string) {
	// trainingBytes(m, h) = h·(16·795 + 4m) + 160 + 4·784·m
	perUnit := 16*(mnist.ImageSize+1+mnist.Classes) + 4*float64(m)
	byMemory := (l.memory - 4*mnist.Classes*4 - 4*mnist.ImageSize*float64(m)) / perUnit
	byBinding := l.binding / (4 * math.Max(mnist.ImageSize, float64(m)))
	h, why := byMemory, "what "+l.memoryName+" allows"
	if byBinding < byMemory {
		h, why = byBinding, fmt.Sprintf("the largest whose weights and activations fit the GPU's %s storage binding limit", device.FormatBytes(int64(l.binding)))
	}
	switch {
	case h < 1:
		return 0, why
	case h >= math.MaxInt:
		return math.MaxInt, why
	}
	return int(h), why
}
