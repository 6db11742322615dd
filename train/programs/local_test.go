package programs

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
	"github.com/tessera-ml/tessera/train"
)

// localProgram is a program run by TestLocalTrainsAsOneProcess: its
// arguments without -batch, each rank's batch, and whether its batch
// norms normalise each rank's part alone (then only the ranks agree).
type localProgram struct {
	name  string
	args  []string
	batch int
	bn    bool
}

// localPrograms are small and odd: a few seconds on lavapipe for all.
// TESSERA_LOCAL_FULL=1 runs the acceptance sizes instead (as
// TESSERA_MPI_FULL=1 does for TestMPITrainsAsOneProcess): the programs'
// defaults for 50 steps, mnist-mlp on the real MNIST, each step's
// difference logged.
func localPrograms(t *testing.T) []localProgram {
	if os.Getenv("TESSERA_LOCAL_FULL") == "1" {
		return []localProgram{
			{"mnist-mlp", []string{"-steps", "50"}, 64, false},
			{"lstm", []string{"-steps", "50"}, 16, false},
			{"gpt", []string{"-data", filepath.Join(runtime.GOROOT(), "src", "fmt", "print.go"), "-steps", "50", "-warmup", "10", "-sample-every", "0"}, 16, false},
		}
	}
	mnistDir := tinyMNIST(t)
	return []localProgram{
		// 200 images, 7 a rank: the 15th step ends the epoch short (2+2) and the 16th starts the next.
		{"mnist-mlp", []string{"-data", mnistDir, "-hidden", "9", "-layers", "1", "-steps", "16"}, 7, false},
		{"lstm", []string{"-hidden", "7", "-sequences", "40", "-length", "7", "-delay", "2", "-steps", "6"}, 3, false},
		{"gpt", []string{"-data", corpusFile(), "-context", "7", "-width", "10", "-heads", "2", "-layers", "1", "-warmup", "2", "-sample-every", "3", "-sample-len", "3", "-steps", "5"}, 3, false},
		{"mnist-cnn", []string{"-data", mnistDir, "-width", "3", "-steps", "3"}, 5, true},
	}
}

// TestLocalTrainsAsOneProcess trains mnist-mlp, lstm and gpt with
// -device listing two devices of this process, batch b each, and on the
// first of them alone with batch 2b: step for step the ranks' mean loss
// is the lone device's within 1e-5 relative, and after every step the
// two ranks' parameters are bitwise equal and their reported losses
// equal. mnist-cnn's batch norms normalise each rank's part alone, so
// its ranks only agree. The devices: two lavapipe devices (two logical
// GPUs of one adapter, see TestMain), skipped without a GPU unless
// TESSERA_REQUIRE_GPU=1, and the CPU named twice, always.
func TestLocalTrainsAsOneProcess(t *testing.T) {
	t.Run("gpu:0,gpu:1", func(t *testing.T) {
		gpu := devtest.MustGPU(t)
		second := tensor.GPU(gpu.Index + 1)
		if err := tensor.Available(second); err != nil {
			t.Fatalf("a second logical GPU (%s): %v", tensor.LogicalGPUsEnv, err)
		}
		trainLocally(t, []tensor.Device{gpu, second})
	})
	t.Run("cpu,cpu", func(t *testing.T) {
		trainLocally(t, []tensor.Device{tensor.CPU, tensor.CPU})
	})
}

// trainLocally runs localPrograms on devs, one rank each, and alone on
// devs[0] with their union batch, and compares them.
func trainLocally(t *testing.T, devs []tensor.Device) {
	list := make([]string, len(devs))
	for i, d := range devs {
		list[i] = d.String()
	}
	for _, p := range localPrograms(t) {
		t.Run(p.name, func(t *testing.T) {
			start := time.Now()
			ranks := make([][]rankStep, len(devs)) // each rank's goroutine appends to its own
			watch := func(rank, _ int, v float64, task train.Task) {
				ranks[rank] = append(ranks[rank], rankStep{v, paramHash(task.State().Model)})
			}
			args := append([]string{"-eval-every", "0", "-batch", strconv.Itoa(p.batch)}, p.args...)
			var out strings.Builder
			res, err := train.Main(train.Lookup(p.name), append([]string{"-device", strings.Join(list, ",")}, args...), train.Options{Stdout: &out, Watch: watch})
			if err != nil {
				t.Fatalf("-device %s: %v\n%s", strings.Join(list, ","), err, out.String())
			}
			took := time.Since(start)
			if res.World != len(devs) || len(res.Devices) != len(devs) {
				t.Errorf("the result gives a world of %d on %v, want %d on %v", res.World, res.Devices, len(devs), devs)
			}
			if want := "data-parallel over 2 ranks: " + strconv.Itoa(2*p.batch) + " examples a step"; !strings.Contains(out.String(), want) {
				t.Errorf("the summary does not say %q:\n%s", want, out.String())
			}
			var alone []float64
			one := func(_, _ int, v float64, _ train.Task) { alone = append(alone, v) }
			args[3] = strconv.Itoa(len(devs) * p.batch)
			runProgram(t, train.Lookup(p.name), devs[0], args, train.Options{Watch: one})
			for rank, steps := range ranks {
				if len(steps) != len(alone) {
					t.Fatalf("rank %d ran %d steps, one device %d", rank, len(steps), len(alone))
				}
			}
			tol, worst, equal := approx.Tol{Rel: 1e-5}, 0.0, "bitwise equal"
			for i, want := range alone {
				r0, r1 := ranks[0][i], ranks[1][i]
				if r0.hash != r1.hash {
					t.Errorf("step %d: the ranks' parameters differ", i)
					equal = "NOT equal"
				}
				if math.Float64bits(r0.loss) != math.Float64bits(r1.loss) {
					t.Errorf("step %d: the ranks report losses %v and %v", i, r0.loss, r1.loss)
				}
				d := math.Abs(r0.loss-want) / math.Abs(want)
				worst = max(worst, d)
				if os.Getenv("TESSERA_LOCAL_FULL") == "1" {
					t.Logf("%s step %d: %.3g", p.name, i, d)
				}
				if !p.bn && !tol.Equal(r0.loss, want) {
					t.Errorf("step %d: the ranks' mean loss is %.9g, one device with batch %d has %.9g", i, r0.loss, 2*p.batch, want)
				}
			}
			t.Logf("%s on %s: %d steps in %v, the ranks %s, largest relative difference of the loss from one device's %.2g",
				p.name, strings.Join(list, ","), len(alone), took.Round(time.Millisecond), equal, worst)
		})
	}
}
