package programs

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/tessera-ml/tessera/data"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
	"github.com/tessera-ml/tessera/train"
)

func init() {
	train.Register(&train.Program{
		Name:     "timeseries",
		Summary:  "an LSTM forecasting the pandas ramp series (1…9…1 ×1000, a copy shifted by 9) read back from CSV",
		Defaults: train.Defaults{Steps: 1500, Batch: 64, LR: 1e-2, EvalEvery: 100},
		Setup: func(fs *flag.FlagSet) train.Builder {
			c := seriesConfig{}
			fs.StringVar(&c.csv, "csv", "", "CSV file the series is written to and read back from (default: one in the temporary folder)")
			fs.IntVar(&c.window, "window", 16, "rows per input window")
			fs.IntVar(&c.hidden, "hidden", 32, "LSTM hidden units")
			fs.Float64Var(&c.holdout, "holdout", 0.2, "fraction of the series, at its end, held out")
			return func(r *train.Run) (train.Task, error) { return newSeriesTask(r, c) }
		},
	})
}

type seriesConfig struct {
	csv            string
	window, hidden int
	holdout        float64
}

// seriesTask forecasts the next row of both columns of data.RampSeries
// from a window of rows with an nn.LSTM and a linear read-out of its last
// state, on columns standardised by the training rows' mean and std; it
// compares the held-out MSE (in the series' units) with that of the
// last-value forecast.
type seriesTask struct {
	c            seriesConfig
	r            *train.Run
	lstm         *nn.LSTM
	readout      *nn.LinearLayer
	model        *nn.Sequential
	opt          optim.Optimizer
	loader       *data.Loader
	test         *data.SeriesWindows
	mean, std    []float64
	lastValue    float64 // the last-value forecast's held-out MSE
	cols         int
	testX, testY []float32
	testN        int
}

func newSeriesTask(r *train.Run, c seriesConfig) (*seriesTask, error) {
	if c.window < 1 || c.hidden < 1 || !(c.holdout > 0 && c.holdout < 1) {
		return nil, train.UsageError("want -window ≥ 1, -hidden ≥ 1 and -holdout in (0, 1)")
	}
	path := c.csv
	if path == "" {
		path = filepath.Join(os.TempDir(), fmt.Sprintf("tessera-ramp-%d.csv", r.Seed))
	}
	series, err := data.RampSeries(1000, 9, r.Seed)
	if err != nil {
		return nil, err
	}
	if err := data.WriteCSV(path, series); err != nil {
		return nil, err
	}
	f, err := data.ReadCSV(path)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(r.Out, "timeseries: %d rows of %q written to and read back from %s\n", f.Rows(), f.Names, path)
	n := f.Rows()
	cut := int(float64(n) * (1 - c.holdout))
	if cut < c.window+1 || n-cut < 1 {
		return nil, train.UsageError("-holdout leaves no training or held-out window")
	}
	t := &seriesTask{c: c, r: r, cols: len(f.Names)}
	for _, col := range f.Columns {
		m, s := meanStd(col[:cut])
		t.mean, t.std = append(t.mean, m), append(t.std, s)
	}
	scaled := func(lo, hi int) *data.Frame {
		g := &data.Frame{Names: f.Names}
		for j, col := range f.Columns {
			out := make([]float64, hi-lo)
			for i := range out {
				out[i] = (col[lo+i] - t.mean[j]) / t.std[j]
			}
			g.Columns = append(g.Columns, out)
		}
		return g
	}
	trainW, err := data.NewSeriesWindows(scaled(0, cut), f.Names, f.Names, c.window, 1)
	if err != nil {
		return nil, err
	}
	// Held-out windows predict the rows from cut on.
	if t.test, err = data.NewSeriesWindows(scaled(cut-c.window, n), f.Names, f.Names, c.window, 1); err != nil {
		return nil, err
	}
	if r.Batch > trainW.Len() {
		return nil, train.UsageError(fmt.Sprintf("-batch must be at most the %d training windows", trainW.Len()))
	}
	if t.loader, err = data.NewLoader(trainW, data.Config{BatchSize: r.Batch, Shuffle: true, Seed: r.Seed, Device: r.Device, DropLast: true}); err != nil {
		return nil, err
	}
	t.testN = t.test.Len()
	all := make([]int, t.testN)
	for i := range all {
		all[i] = i
	}
	t.testX, t.testY = make([]float32, t.testN*c.window*t.cols), make([]float32, t.testN*t.cols)
	t.test.Gather(0, all, t.testX)
	t.test.Gather(1, all, t.testY)
	// The last-value forecast: each window's last row.
	sq := 0.0
	for i := range t.testN {
		for j := range t.cols {
			last := float64(t.testX[(i*c.window+c.window-1)*t.cols+j])
			d := (last - float64(t.testY[i*t.cols+j])) * t.std[j]
			sq += d * d
		}
	}
	t.lastValue = sq / float64(t.testN*t.cols)

	g := tensor.NewGenerator(r.Seed)
	opts := []tensor.Option{tensor.On(r.Device), tensor.WithGenerator(g)}
	t.lstm = nn.NewLSTM(t.cols, c.hidden, 1, opts...)
	t.readout = nn.NewLinear(c.hidden, t.cols, opts...)
	t.model = nn.NewSequential().Add("lstm", lastStep{t.lstm}).Add("readout", t.readout)
	t.opt = optim.NewAdam(nn.Parameters(t.model), optim.LR(r.LR))
	return t, nil
}

// lastStep runs an LSTM over windows [batch, window, features] and
// returns its last hidden state, [batch, hidden].
type lastStep struct{ *nn.LSTM }

func (l lastStep) Forward(x *tensor.Tensor) *tensor.Tensor {
	out, _, _ := l.LSTM.Forward(x.Transpose(0, 1), nil, nil)
	return out.Select(0, out.Size(0)-1)
}

func meanStd(v []float64) (mean, std float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		std += (x - mean) * (x - mean)
	}
	std = math.Sqrt(std / float64(len(v)))
	if std == 0 {
		std = 1
	}
	return mean, std
}

func (t *seriesTask) StepsPerEpoch() int { return t.loader.BatchesPerEpoch() }

func (t *seriesTask) Step(int) float64 {
	return train.SupervisedStep(t.loader, t.opt, nil, func(b *data.Batch) *tensor.Tensor {
		return nn.MSELoss(t.model.Forward(b.Tensors[0]), b.Tensors[1])
	})
}

// Evaluate returns the held-out MSE in the series' units, the last-value
// forecast's, and their ratio.
func (t *seriesTask) Evaluate() []train.Metric {
	var pred []float32
	tensor.NoGrad(func() {
		tensor.Scope(func() {
			x := tensor.New(t.testX, t.testN, t.c.window, t.cols).To(t.r.Device)
			pred = t.model.Forward(x).To(tensor.CPU).Float32s()
		})
	})
	sq := 0.0
	for i, p := range pred {
		d := float64(p-t.testY[i]) * t.std[i%t.cols]
		sq += d * d
	}
	mse := sq / float64(len(pred))
	return []train.Metric{
		{Name: "held-out MSE / last-value MSE", Value: mse / t.lastValue},
		{Name: "held-out MSE", Value: mse},
		{Name: "last-value MSE", Value: t.lastValue},
	}
}

func (t *seriesTask) State() *train.State {
	return &train.State{Model: t.model, Optimizer: t.opt, Loader: t.loader}
}

func (t *seriesTask) Close() { t.loader.Close() }
