package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/internal/mnist"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
)

// train fits a ReLU MLP to MNIST with Adam and cross-entropy on the
// default device, then reports test accuracy.
func train(args []string) error {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	steps := fs.Int("steps", 1000, "training steps (469 steps of batch 128 are one epoch)")
	batch := fs.Int("batch", 128, "examples per step")
	hidden := fs.Int("hidden", 256, "hidden units")
	lr := fs.Float64("lr", 1e-3, "Adam learning rate")
	seed := fs.Uint64("seed", 1, "random seed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	dev, notice, err := tensor.DefaultDevice()
	if err != nil {
		return err
	}
	fmt.Println("tessera:", notice)

	start := time.Now()
	trainSet, testSet, err := mnist.Load()
	if err != nil {
		return err
	}
	fmt.Printf("loaded MNIST: %d training and %d test images in %v\n", trainSet.Len(), testSet.Len(), time.Since(start).Round(time.Millisecond))

	tensor.ManualSeed(*seed)
	model := nn.NewMLP([]int{mnist.ImageSize, *hidden, 10}, (*tensor.Tensor).ReLU, tensor.On(dev))
	opt := optim.NewAdam(model.Parameters(), optim.LR(*lr))
	rng := rand.New(rand.NewPCG(*seed, 0))

	bar := progressbar.NewOptions(*steps, progressbar.OptionSetDescription("training"),
		progressbar.OptionShowCount(), progressbar.OptionThrottle(200*time.Millisecond))
	start = time.Now()
	var loss float64
	for step := 0; step < *steps; step++ {
		x, y := sample(trainSet, rng.Perm(trainSet.Len())[:*batch], dev)
		tensor.Scope(func() {
			l := nn.CrossEntropy(model.Forward(x), y)
			autograd.Backward(l)
			opt.Step()
			opt.ZeroGrad()
			if step%50 == 0 || step == *steps-1 {
				loss = l.Item()
				bar.Describe(fmt.Sprintf("training (loss %.3f)", loss))
			}
		})
		x.Release()
		y.Release()
		bar.Add(1)
	}
	bar.Finish()
	elapsed := time.Since(start)
	fmt.Printf("\n%d steps in %v (%.1f steps/s), final training loss %.4f\n", *steps, elapsed.Round(time.Millisecond),
		float64(*steps)/elapsed.Seconds(), loss)
	fmt.Printf("test accuracy: %.2f%%\n", 100*accuracy(model, testSet, dev))
	if dev.Kind == tensor.KindGPU {
		if g, err := tensor.GPUDevice(dev); err == nil {
			fmt.Print(g.Stats())
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
	const chunk = 1000
	tensor.NoGrad(func() {
		for lo := 0; lo < s.Len(); lo += chunk {
			idx := make([]int, 0, chunk)
			for i := lo; i < min(lo+chunk, s.Len()); i++ {
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
