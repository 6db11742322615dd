package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/ddp"
	"github.com/tessera-ml/tessera/distributed"
	"github.com/tessera-ml/tessera/internal/mnist"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
	trainpkg "github.com/tessera-ml/tessera/train"
	_ "github.com/tessera-ml/tessera/train/programs" // registers the programs
)

// trainFlags are the flags of tessera train.
type trainFlags struct {
	steps, batch, hidden int
	lr                   float64
	seed                 uint64
}

// parseTrain parses and checks the flags of train as far as they can be
// checked without the data and the device.
func parseTrain(args []string, stdout io.Writer) (trainFlags, error) {
	var f trainFlags
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.IntVar(&f.steps, "steps", 1000, "training steps (469 steps of batch 128 are one epoch)")
	fs.IntVar(&f.batch, "batch", 128, "examples per step, at most the training set size")
	fs.IntVar(&f.hidden, "hidden", 256, "hidden units, as many as the device's memory allows")
	fs.Float64Var(&f.lr, "lr", 1e-3, "Adam learning rate, positive")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed")
	if err := parseFlags(fs, args, stdout); err != nil {
		return f, err
	}
	switch {
	case f.steps < 1:
		return f, usagef("-steps must be at least 1, got %d", f.steps)
	case f.batch < 1:
		return f, usagef("-batch must be at least 1, got %d", f.batch)
	case f.hidden < 1:
		return f, usagef("-hidden must be at least 1, got %d", f.hidden)
	case !(f.lr > 0) || math.IsInf(f.lr, 1):
		return f, usagef("-lr must be a positive finite number, got %v", f.lr)
	}
	return f, nil
}

// checkSizes checks -batch and -hidden against the training set and what
// the device allows (see maxBatch and maxHidden).
func checkSizes(f trainFlags, dev tensor.Device, trainLen, testLen int) error {
	l := limitsOf(dev)
	if n, why := maxBatch(l, trainLen); f.batch > n {
		return usagef("-batch must be between 1 and %d (%s), got %d", n, why, f.batch)
	}
	m := max(f.batch, min(evalChunk, testLen))
	n, why := maxHidden(l, m)
	if n < 1 {
		return usagef("-batch %d is too large for the device: no -hidden fits (%s with -batch %d)", f.batch, why, f.batch)
	}
	if f.hidden > n {
		return usagef("-hidden must be between 1 and %d (%s with -batch %d), got %d", n, why, f.batch, f.hidden)
	}
	return nil
}

// leaveWorld, when set, closes the world of mpirun's ranks that train
// joined; run calls it after reporting the command's error, so that no
// rank exits (which ends the job) before rank 0 has written its line.
var leaveWorld func() error

// train runs the program args[0] names (see package train/programs),
// lists the programs for --help, and otherwise runs the MNIST demo.
func train(args []string, stdout io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "-h", "-help", "--help", "help":
			trainHelp(stdout)
			return flag.ErrHelp
		}
		if p := trainpkg.Lookup(args[0]); p != nil {
			g, err := distributed.Init() // a world of one without mpirun
			if err != nil {
				return err
			}
			leaveWorld = g.Close
			_, err = trainpkg.Main(p, args[1:], trainpkg.Options{Stdout: stdout, Signals: true, Group: ddp.MPI(g)})
			return err
		}
		if !strings.HasPrefix(args[0], "-") {
			return usagef("unknown program %q (run tessera train --help for the list)", args[0])
		}
	}
	return demo(args, stdout)
}

// trainHelp lists the programs, one line each, and the demo's flags.
func trainHelp(w io.Writer) {
	fmt.Fprint(w, "usage: tessera train <program> [flags]   (tessera train <program> -h lists its flags)\n\nprograms:\n")
	trainpkg.List(w)
	fmt.Fprint(w, "\ntessera train [flags] without a program trains the MNIST demo, with these flags:\n")
	parseTrain([]string{"-h"}, w)
}

// demo fits a ReLU MLP to MNIST with Adam and cross-entropy on the
// default device, then reports test accuracy. Bad flags are usage errors;
// a loss that turns NaN or infinite stops training with an error.
func demo(args []string, stdout io.Writer) error {
	f, err := parseTrain(args, stdout)
	if err != nil {
		return err
	}
	dev, notice, err := tensor.DefaultDevice()
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "tessera:", notice)

	start := time.Now()
	trainSet, testSet, err := mnist.Load()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "loaded MNIST: %d training and %d test images in %v\n", trainSet.Len(), testSet.Len(), time.Since(start).Round(time.Millisecond))
	if err := checkSizes(f, dev, trainSet.Len(), testSet.Len()); err != nil {
		return err
	}

	tensor.ManualSeed(f.seed)
	model := nn.NewMLP([]int{mnist.ImageSize, f.hidden, mnist.Classes}, (*tensor.Tensor).ReLU, tensor.On(dev))
	opt := optim.NewAdam(nn.Parameters(model), optim.LR(f.lr))
	rng := rand.New(rand.NewPCG(f.seed, 0))

	bar := progressbar.NewOptions(f.steps, progressbar.OptionSetDescription("training"), progressbar.OptionSetWriter(stdout),
		progressbar.OptionShowCount(), progressbar.OptionThrottle(200*time.Millisecond))
	done := false
	defer func() {
		if !done {
			fmt.Fprintln(stdout) // end the progress bar's line before the error
		}
	}()
	start = time.Now()
	var loss float64
	for step := 0; step < f.steps; step++ {
		x, y := sample(trainSet, rng.Perm(trainSet.Len())[:f.batch], dev)
		tensor.Scope(func() {
			l := nn.CrossEntropy(model.Forward(x), y)
			autograd.Backward(l)
			opt.Step()
			opt.ZeroGrad()
			if step%50 == 0 || step == f.steps-1 {
				loss = l.Item()
				bar.Describe(fmt.Sprintf("training (loss %.3f)", loss))
			}
		})
		x.Release()
		y.Release()
		if math.IsNaN(loss) || math.IsInf(loss, 0) {
			return fmt.Errorf("training diverged: the loss is %v at step %d (try a smaller -lr than %g)", loss, step, f.lr)
		}
		bar.Add(1)
	}
	bar.Finish()
	done = true
	elapsed := time.Since(start)
	fmt.Fprintf(stdout, "\n%d steps in %v (%.1f steps/s), final training loss %.4f\n", f.steps, elapsed.Round(time.Millisecond),
		float64(f.steps)/elapsed.Seconds(), loss)
	fmt.Fprintf(stdout, "test accuracy: %.2f%%\n", 100*accuracy(model, testSet, dev))
	if dev.Kind == tensor.KindGPU {
		if g, err := tensor.GPUDevice(dev); err == nil {
			fmt.Fprint(stdout, g.Stats())
		}
	}
	return nil
}

// sample returns the images and labels at idx as tensors on dev.
func sample(s *mnist.Set, idx []int, dev tensor.Device) (x, y *tensor.Tensor) {
	px := make([]float32, 0, len(idx)*mnist.ImageSize)
	lb := make([]int32, 0, len(idx))
	for _, i := range idx {
		px = append(px, s.Pixels[i*mnist.ImageSize:(i+1)*mnist.ImageSize]...)
		lb = append(lb, s.Labels[i])
	}
	return tensor.New(px, len(idx), mnist.ImageSize).To(dev), tensor.New(lb).To(dev)
}

// accuracy returns the fraction of s the model classifies correctly.
func accuracy(model nn.Layer, s *mnist.Set, dev tensor.Device) float64 {
	correct := 0.0
	tensor.NoGrad(func() {
		for lo := 0; lo < s.Len(); lo += evalChunk {
			idx := make([]int, 0, evalChunk)
			for i := lo; i < min(lo+evalChunk, s.Len()); i++ {
				idx = append(idx, i)
			}
			tensor.Scope(func() {
				x, y := sample(s, idx, dev)
				correct += model.Forward(x).ArgMaxDim(1, false).Eq(y).Sum().Item()
			})
		}
	})
	return correct / float64(s.Len())
}
