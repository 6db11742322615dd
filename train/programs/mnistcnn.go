package programs

import (
	"flag"
	"fmt"
	"math"

	"github.com/go-gl/mathgl/mgl32"

	"github.com/tessera-ml/tessera/data"
	"github.com/tessera-ml/tessera/internal/mnist"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
	"github.com/tessera-ml/tessera/train"
)

func init() {
	train.Register(&train.Program{
		Name:     "mnist-cnn",
		Summary:  "a batch-normalised CNN on MNIST with random affine augmentation and one-cycle Adam (≥ 99% test accuracy on the CPU)",
		Defaults: train.Defaults{Epochs: 3, Batch: 128, LR: 5e-3, EvalEvery: 469},
		Parallel: true,
		Setup: func(fs *flag.FlagSet) train.Builder {
			c := cnnConfig{}
			fs.IntVar(&c.width, "width", 16, "channels of the first convolution (the second has twice as many)")
			fs.StringVar(&c.dir, "data", "", "folder with the four MNIST .gz files (default: the GoMNIST module's)")
			fs.Float64Var(&c.rotate, "rotate", 10, "largest random rotation, degrees (0: none)")
			fs.Float64Var(&c.scale, "scale", 0.1, "largest random change of scale, as a fraction (0: none)")
			fs.Float64Var(&c.shift, "shift", 2, "largest random shift, pixels (0: none)")
			return func(r *train.Run) (train.Task, error) { return newMNISTCNN(r, c) }
		},
	})
}

type cnnConfig struct {
	width                int
	dir                  string
	rotate, scale, shift float64
}

// mnistCNN trains, on MNIST's training images under random affine maps,
//
//	conv 3×3 (1→w) → batch norm → ReLU → max pool 2
//	conv 3×3 (w→2w) → batch norm → ReLU → max pool 2
//	flatten → linear (2w·7·7 → 10)
//
// with Adam under a one-cycle schedule, and tests it in evaluation mode
// (the batch norms' running statistics) on the test set.
//
// Data-parallel, each rank normalises by its own part of the batch (there
// is no SyncBatchNorm) and keeps rank 0's running statistics, so the
// ranks train as PyTorch's DistributedDataParallel does, not as one
// process with their union batch; the augmentation is the union batch's.
type mnistCNN struct {
	r      *train.Run
	c      cnnConfig
	model  *nn.Sequential
	opt    optim.Optimizer
	sched  optim.Scheduler
	loader *data.Loader
	test   *data.InMemory
	dev    tensor.Device
	aug    *tensor.Generator
}

func newMNISTCNN(r *train.Run, c cnnConfig) (*mnistCNN, error) {
	switch {
	case c.width < 1:
		return nil, train.UsageError("-width must be at least 1")
	case !(c.rotate >= 0 && c.rotate <= 180) || !(c.scale >= 0 && c.scale < 1) || !(c.shift >= 0 && c.shift <= mnist.Cols):
		return nil, train.UsageError("-rotate must lie in [0, 180], -scale in [0, 1), -shift in [0, 28]")
	}
	trainSet, testSet, err := data.LoadMNIST(c.dir)
	if err != nil {
		return nil, err
	}
	if n := r.Shard().Len(trainSet.Len()); r.Batch > n {
		if r.World > 1 {
			return nil, train.UsageError(fmt.Sprintf("-batch %d is more than each of %d ranks' share of the training set's %d images, %d", r.Batch, r.World, trainSet.Len(), n))
		}
		return nil, train.UsageError("-batch must be at most the training set's 60000 images")
	}
	// The batches stay on the CPU, where the augmentation warps them.
	loader, err := data.NewLoader(trainSet, data.Config{BatchSize: r.Batch, Shuffle: true, Seed: r.Seed, Shard: r.Shard(), Context: r.Context})
	if err != nil {
		return nil, err
	}
	m := &mnistCNN{r: r, c: c, loader: loader, test: testSet, dev: r.Device, aug: tensor.NewGenerator(r.Seed + 1)}
	on := r.TensorOptions()
	w := c.width
	same := tensor.ConvOptions{Padding: [2]int{1, 1}}
	pool := nn.MaxPool2d{Window: tensor.Window2d{Kernel: [2]int{2, 2}}}
	m.model = nn.NewSequential(
		nn.Func(func(x *tensor.Tensor) *tensor.Tensor { return x.Reshape(-1, 1, mnist.Rows, mnist.Cols) }),
		nn.NewConv2d(1, w, [2]int{3, 3}, same, false, on...),
		nn.NewBatchNorm2d(w, on...),
		nn.Func((*tensor.Tensor).ReLU),
		pool,
		nn.NewConv2d(w, 2*w, [2]int{3, 3}, same, false, on...),
		nn.NewBatchNorm2d(2*w, on...),
		nn.Func((*tensor.Tensor).ReLU),
		pool,
		nn.Func(func(x *tensor.Tensor) *tensor.Tensor { return x.Flatten(1, -1) }),
		nn.NewLinear(2*w*7*7, mnist.Classes, on...),
	)
	m.opt = optim.NewAdam(nn.Parameters(m.model), optim.LR(r.LR))
	total := r.Steps
	if r.Epochs > 0 {
		total = r.Epochs * loader.BatchesPerEpoch()
	}
	m.sched = optim.NewOneCycleLR(m.opt, r.LR, total, optim.PctStart(0.2))
	return m, nil
}

func (m *mnistCNN) StepsPerEpoch() int { return m.loader.BatchesPerEpoch() }

func (m *mnistCNN) Step(int) float64 {
	var loss float64
	m.r.Scope(func() {
		b := train.NextBatch(m.loader)
		x := m.augment(b.Tensors[0]).To(m.dev)
		l := nn.CrossEntropy(m.model.Forward(x), b.Tensors[1].To(m.dev))
		m.r.Backward(l)
		m.opt.Step()
		m.opt.ZeroGrad()
		m.sched.Step()
		loss = l.Item()
	})
	return loss
}

// augment returns the images of x ([n, 784], on the CPU) each under its
// own random affine map about the centre: a rotation within ±rotate
// degrees, a scale within 1 ± scale and a shift within ±shift pixels,
// drawn from the augmentation generator. Every rank draws the maps of
// the whole global batch and takes its rows' (rank r's row i is row
// r + i·World of the global batch, as data.Shard deals them).
func (m *mnistCNN) augment(x *tensor.Tensor) *tensor.Tensor {
	n := x.Shape()[0]
	if m.c.rotate == 0 && m.c.scale == 0 && m.c.shift == 0 {
		return x
	}
	W := max(m.r.World, 1)
	all := tensor.Uniform([]int{W * n, 4}, -1, 1, tensor.WithGenerator(m.aug), tensor.In(m.r.Context)).Float32s()
	u := make([]float32, 0, 4*n)
	for i := range n {
		j := m.r.Rank + i*W
		u = append(u, all[4*j:4*j+4]...)
	}
	src := x.Float32s()
	dst := make([]float32, len(src))
	const centre = (mnist.Cols - 1) / 2.0
	for i := range n {
		r := u[4*i : 4*i+4]
		angle := float32(m.c.rotate*math.Pi/180) * r[0]
		s := 1 + float32(m.c.scale)*r[1]
		shift := float32(m.c.shift)
		forward := mgl32.Translate2D(centre+shift*r[2], centre+shift*r[3]).
			Mul3(mgl32.HomogRotate2D(angle)).
			Mul3(mgl32.Scale2D(s, s)).
			Mul3(mgl32.Translate2D(-centre, -centre))
		warp(dst[i*mnist.ImageSize:][:mnist.ImageSize], src[i*mnist.ImageSize:][:mnist.ImageSize], forward.Inv())
	}
	return tensor.From(dst, []int{n, mnist.ImageSize}, tensor.In(m.r.Context))
}

// warp fills the 28×28 image dst with src sampled bilinearly at the
// points inverse maps dst's pixels to (zero outside src).
func warp(dst, src []float32, inverse mgl32.Mat3) {
	at := func(x, y int) float32 {
		if x < 0 || y < 0 || x >= mnist.Cols || y >= mnist.Rows {
			return 0
		}
		return src[y*mnist.Cols+x]
	}
	for y := range mnist.Rows {
		for x := range mnist.Cols {
			p := inverse.Mul3x1(mgl32.Vec3{float32(x), float32(y), 1})
			fx, fy := float32(math.Floor(float64(p[0]))), float32(math.Floor(float64(p[1])))
			ax, ay := p[0]-fx, p[1]-fy
			x0, y0 := int(fx), int(fy)
			top := at(x0, y0)*(1-ax) + at(x0+1, y0)*ax
			bottom := at(x0, y0+1)*(1-ax) + at(x0+1, y0+1)*ax
			dst[y*mnist.Cols+x] = top*(1-ay) + bottom*ay
		}
	}
}

func (m *mnistCNN) Evaluate() []train.Metric {
	nn.Eval(m.model)
	defer nn.Train(m.model)
	acc, loss := classify(m.model, m.test, m.r)
	return []train.Metric{
		{Name: "test accuracy", Value: acc, Unit: "%"},
		{Name: "test loss", Value: loss, WithCurve: true},
	}
}

func (m *mnistCNN) State() *train.State {
	return &train.State{Model: m.model, Optimizer: m.opt, Schedule: m.sched, Loader: m.loader,
		Generators: map[string]*tensor.Generator{"augment": m.aug}}
}

func (m *mnistCNN) Close() { m.loader.Close() }
