package nn_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/tensor"
)

// TestLayerBadInput: misuse of the norm, recurrent, attention,
// transformer and activation layers is a *tensor.Error of the right
// kind naming the layer, never a runtime panic.
func TestLayerBadInput(t *testing.T) {
	x3 := tensor.Ones([]int{4, 2, 6})
	mha := nn.NewMultiheadAttention(6, 2, true)
	cfg := nn.DefaultTransformerConfig()
	bad := cfg
	bad.Activation = "swish"
	noFF := cfg
	noFF.DimFeedforward = 0
	for _, c := range []struct {
		name string
		kind error
		want string
		f    func()
	}{
		{"BatchNorm(nil)", tensor.ErrArgument, "nn.BatchNorm", func() { nn.BatchNorm(nil, nil, nil, nil, nil, true, 0.1, 1e-5) }},
		{"BatchNorm 1-D input", tensor.ErrShape, "(N, C, *)", func() { nn.BatchNorm(tensor.Ones([]int{3}), nil, nil, nil, nil, true, 0.1, 1e-5) }},
		{"BatchNorm one running stat", tensor.ErrArgument, "both", func() {
			nn.BatchNorm(tensor.Ones([]int{3, 2}), tensor.Zeros([]int{2}), nil, nil, nil, true, 0.1, 1e-5)
		}},
		{"BatchNorm1d 4-D input", tensor.ErrShape, "nn.BatchNorm1d", func() { nn.NewBatchNorm1d(2).Forward(tensor.Ones([]int{2, 2, 2, 2})) }},
		{"BatchNorm2d wrong channels", tensor.ErrShape, "[3]", func() { nn.NewBatchNorm2d(3).Forward(tensor.Ones([]int{2, 4, 2, 2})) }},
		{"BatchNorm1d one value per channel", tensor.ErrShape, "more than 1 value", func() { nn.NewBatchNorm1d(3).Forward(tensor.Ones([]int{1, 3})) }},
		{"BatchNorm2d(nil)", tensor.ErrArgument, "nn.BatchNorm2d", func() { nn.NewBatchNorm2d(3).Forward(nil) }},
		{"NewBatchNorm1d(-1)", tensor.ErrArgument, "negative", func() { nn.NewBatchNorm1d(-1) }},
		{"NewGroupNorm(4, 6)", tensor.ErrArgument, "divisible", func() { nn.NewGroupNorm(4, 6) }},
		{"NewGroupNorm(0, 6)", tensor.ErrArgument, "divisible", func() { nn.NewGroupNorm(0, 6) }},
		{"GroupNorm channels", tensor.ErrShape, "divisible", func() { nn.NewGroupNorm(2, 4).Forward(tensor.Ones([]int{2, 3, 2})) }},
		{"GroupNorm weight", tensor.ErrShape, "[4]", func() { nn.GroupNorm(tensor.Ones([]int{2, 4}), 2, tensor.Ones([]int{3}), nil, 1e-5) }},
		{"GRUCell(nil)", tensor.ErrArgument, "nn.GRUCell", func() { nn.NewGRUCell(3, 2).Forward(nil, nil) }},
		{"GRUCell state", tensor.ErrShape, "state", func() { nn.NewGRUCell(3, 2).Forward(tensor.Ones([]int{4, 3}), tensor.Ones([]int{4, 3})) }},
		{"NewGRU(3, 2, 0)", tensor.ErrArgument, "at least one layer", func() { nn.NewGRU(3, 2, 0) }},
		{"NewGRU(3, 2, 2⁴⁰)", tensor.ErrOutOfMemory, "CPU budget", func() { nn.NewGRU(3, 2, 1<<40) }},
		{"NewRNN(huge, huge, 1)", tensor.ErrOutOfMemory, "CPU budget", func() { nn.NewRNN(math.MaxInt, math.MaxInt, 1, false) }},
		{"NewGRUCell(3, huge)", tensor.ErrOutOfMemory, "CPU budget", func() { nn.NewGRUCell(3, math.MaxInt/2) }},
		{"NewRNN(3, -2, 1)", tensor.ErrArgument, "negative", func() { nn.NewRNN(3, -2, 1, false) }},
		{"GRU 4-D input", tensor.ErrShape, "(seq, batch, input)", func() { nn.NewGRU(3, 2, 1).Forward(tensor.Ones([]int{4, 1, 1, 3}), nil) }},
		{"GRU unbatched with a batched state", tensor.ErrShape, "(layers, hidden)", func() {
			nn.NewGRU(3, 2, 1).Forward(tensor.Ones([]int{4, 3}), tensor.Zeros([]int{1, 1, 2}))
		}},
		{"LSTM c0 batch", tensor.ErrShape, "states", func() {
			nn.NewLSTM(3, 2, 1).Forward(tensor.Ones([]int{4, 2, 3}), nil, tensor.Zeros([]int{1, 3, 2}))
		}},
		{"RNN h0 layers", tensor.ErrShape, "states must be (2 layers", func() {
			nn.NewRNN(3, 2, 2, false).Forward(tensor.Ones([]int{4, 1, 3}), tensor.Zeros([]int{1, 1, 2}))
		}},
		{"RNN nil cell", tensor.ErrArgument, "cell 1 is nil", func() { (&nn.RNN{Cells: []*nn.RNNCell{nn.NewRNNCell(3, 2), nil}}).Forward(x3, nil) }},
		{"GRU no cells", tensor.ErrArgument, "no layer", func() { (&nn.GRU{}).Forward(x3, nil) }},
		{"NewMultiheadAttention(6, 4)", tensor.ErrArgument, "divisible", func() { nn.NewMultiheadAttention(6, 4, true) }},
		{"MultiheadAttention(nil)", tensor.ErrArgument, "query", func() { mha.Forward(nil, x3, x3, nn.AttentionMasks{}) }},
		{"MultiheadAttention embed", tensor.ErrShape, "(L, N, 6)", func() { x := tensor.Ones([]int{4, 2, 5}); mha.Forward(x, x, x, nn.AttentionMasks{}) }},
		{"MultiheadAttention key/value", tensor.ErrShape, "(S, N, 6)", func() { mha.Forward(x3, x3, tensor.Ones([]int{3, 2, 6}), nn.AttentionMasks{}) }},
		{"MultiheadAttention batch", tensor.ErrShape, "batch size", func() {
			k := tensor.Ones([]int{4, 3, 6})
			mha.Forward(x3, k, k, nn.AttentionMasks{})
		}},
		{"MultiheadAttention attn_mask shape", tensor.ErrShape, "attn_mask", func() {
			mha.Forward(x3, x3, x3, nn.AttentionMasks{AttnMask: tensor.Zeros([]int{4, 3})})
		}},
		{"MultiheadAttention attn_mask dtype", tensor.ErrDType, "Bool or float", func() {
			mha.Forward(x3, x3, x3, nn.AttentionMasks{AttnMask: tensor.Zeros([]int{4, 4}, tensor.Of(tensor.Int32))})
		}},
		{"MultiheadAttention key_padding_mask", tensor.ErrShape, "key_padding_mask", func() {
			mha.Forward(x3, x3, x3, nn.AttentionMasks{KeyPadding: tensor.Zeros([]int{4, 2}, tensor.Of(tensor.Bool))})
		}},
		{"CausalMask(-1, 2)", tensor.ErrArgument, "negative", func() { nn.CausalMask(-1, 2) }},
		{"NewTransformerEncoderLayer activation", tensor.ErrArgument, "relu/gelu", func() { nn.NewTransformerEncoderLayer(6, 2, bad) }},
		{"NewTransformerEncoderLayer feed-forward", tensor.ErrArgument, "dim_feedforward", func() { nn.NewTransformerEncoderLayer(6, 2, noFF) }},
		{"NewTransformerEncoderLayer heads", tensor.ErrArgument, "divisible", func() { nn.NewTransformerEncoderLayer(6, 4, cfg) }},
		{"NewTransformerEncoder(nil)", tensor.ErrArgument, "need a layer", func() { nn.NewTransformerEncoder(nil, 2, nil) }},
		{"NewTransformerEncoder 2⁴⁰ layers", tensor.ErrOutOfMemory, "CPU budget", func() {
			nn.NewTransformerEncoder(nn.NewTransformerEncoderLayer(6, 2, cfg), 1<<40, nil)
		}},
		{"TransformerEncoder nil layer", tensor.ErrArgument, "layer 0 is nil", func() {
			(&nn.TransformerEncoder{Layers: []*nn.TransformerEncoderLayer{nil}}).Forward(x3)
		}},
		{"TransformerEncoderLayer(nil)", tensor.ErrArgument, "x", func() { nn.NewTransformerEncoderLayer(6, 2, cfg).Forward(nil) }},
		{"GELU(nil)", tensor.ErrArgument, "nn.GELU", func() { nn.GELU{}.Forward(nil) }},
		{"SiLU(nil)", tensor.ErrArgument, "nn.SiLU", func() { nn.SiLU{}.Forward(nil) }},
		{"LeakyReLU int", tensor.ErrDType, "float", func() { nn.NewLeakyReLU().Forward(tensor.Zeros([]int{2}, tensor.Of(tensor.Int32))) }},
		{"Flatten(nil)", tensor.ErrArgument, "nn.Flatten", func() { nn.NewFlatten().Forward(nil) }},
		{"zero GRUCell", tensor.ErrArgument, "weight_ih", func() { (&nn.GRUCell{}).Forward(x3.Select(0, 0), nil) }},
		{"zero LSTMCell", tensor.ErrArgument, "weight_ih", func() { (&nn.LSTMCell{}).Forward(x3.Select(0, 0), nil, nil) }},
		{"zero MultiheadAttention", tensor.ErrArgument, "embed_dim 0", func() { (&nn.MultiheadAttention{}).Forward(x3, x3, x3, nn.AttentionMasks{}) }},
		{"MultiheadAttention without weights", tensor.ErrArgument, "out_proj.weight", func() {
			(&nn.MultiheadAttention{EmbedDim: 6, NumHeads: 2}).Forward(x3, x3, x3, nn.AttentionMasks{})
		}},
		{"MultiheadAttention without projections", tensor.ErrArgument, "q_proj_weight", func() {
			(&nn.MultiheadAttention{EmbedDim: 6, NumHeads: 2, OutProj: nn.NewLinear(6, 6)}).Forward(x3, x3, x3, nn.AttentionMasks{})
		}},
		{"NewMultiheadAttentionKV(6, 2, 0, 3)", tensor.ErrArgument, "kdim 0", func() { nn.NewMultiheadAttentionKV(6, 2, 0, 3, true) }},
		{"MultiheadAttention kdim", tensor.ErrShape, "key (S, N, 4)", func() {
			nn.NewMultiheadAttentionKV(6, 2, 4, 3, true).Forward(x3, x3, tensor.Ones([]int{4, 2, 3}), nn.AttentionMasks{})
		}},
		{"zero TransformerEncoderLayer", tensor.ErrArgument, "self_attn", func() { (&nn.TransformerEncoderLayer{}).Forward(x3) }},
	} {
		err := tensor.Catch(c.f)
		var te *tensor.Error
		if !errors.As(err, &te) || !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a *tensor.Error %v naming %q", c.name, err, c.kind, c.want)
		}
	}
}

// TestBatchNormModes: Train counts batches and moves the running
// statistics; Eval uses them and changes nothing; a layer without running
// statistics uses the batch's in both modes.
func TestBatchNormModes(t *testing.T) {
	bn := nn.NewBatchNorm1d(2)
	model := nn.NewSequential(bn)
	x := tensor.New([]float32{1, 10, 3, 20, 5, 60}, 3, 2)
	model.Forward(x)
	model.Forward(x)
	if n := bn.NumBatchesTracked.Item(); n != 2 {
		t.Errorf("num_batches_tracked %v after two batches, want 2", n)
	}
	// mean (3, 30), unbiased var (4, 700): 0.19·(0.1·stat) + 0.1·stat.
	wantMean, wantVar := []float32{0.57, 5.7}, []float32{0.81*1 + 0.19*4, 0.81*1 + 0.19*700}
	for i, v := range bn.RunningMean.Float32s() {
		if d := v - wantMean[i]; d > 1e-5 || d < -1e-5 {
			t.Errorf("running_mean[%d] = %v, want %v", i, v, wantMean[i])
		}
	}
	for i, v := range bn.RunningVar.Float32s() {
		if d := v - wantVar[i]; d > 1e-3 || d < -1e-3 {
			t.Errorf("running_var[%d] = %v, want %v", i, v, wantVar[i])
		}
	}
	nn.Eval(model)
	y := model.Forward(x).Float32s()
	if n := bn.NumBatchesTracked.Item(); n != 2 || bn.Training {
		t.Errorf("Eval: num_batches_tracked %v, training %v", n, bn.Training)
	}
	if want := (1 - float64(wantMean[0])) / math.Sqrt(float64(wantVar[0])+1e-5); math.Abs(float64(y[0])-want) > 1e-5 {
		t.Errorf("eval output %v, want %v", y[0], want)
	}
	nn.Train(model)
	if !bn.Training {
		t.Error("Train did not reach the batch norm")
	}
	before := bn.RunningMean.Float32s()
	if err := tensor.Catch(func() { bn.Forward(tensor.Ones([]int{3, 5})) }); err == nil || bn.NumBatchesTracked.Item() != 2 ||
		!slices.Equal(bn.RunningMean.Float32s(), before) {
		t.Errorf("a rejected input (%v) changed the batch norm's state", err)
	}
	free := nn.NewBatchNorm1d(2)
	free.RunningMean, free.RunningVar, free.NumBatchesTracked = nil, nil, nil
	free.Training = false
	if m := free.Forward(x).Mean().Item(); math.Abs(m) > 1e-6 {
		t.Errorf("without running statistics eval normalises by the batch: mean %v", m)
	}
	if names := len(nn.StateDict(free)); names != 2 {
		t.Errorf("without running statistics the state dict has %d tensors, want 2", names)
	}
}

// TestStackDropout: dropout between stacked layers acts in training
// only, and never on the last layer's output.
func TestStackDropout(t *testing.T) {
	x := tensor.Randn([]int{5, 3, 4}, tensor.WithGenerator(tensor.NewGenerator(1)))
	m := nn.NewGRU(4, 6, 2)
	nn.Eval(m)
	plain, _ := m.Forward(x, nil)
	m.Dropout = 1 // the second layer reads zeros
	nn.Eval(m)
	if out, _ := m.Forward(x, nil); !slices.Equal(out.Float32s(), plain.Float32s()) {
		t.Error("dropout acted in evaluation")
	}
	nn.Train(m)
	dropped, _ := m.Forward(x, nil)
	m.Cells = m.Cells[1:] // the second layer alone, fed zeros
	want, _ := m.Forward(tensor.Zeros([]int{5, 3, 6}), nil)
	if !slices.Equal(dropped.Float32s(), want.Float32s()) {
		t.Error("with dropout 1 the second layer must read zeros")
	}
}

// TestLayerNilReceivers: a method of a nil layer is ErrArgument naming
// the receiver, as tensor's methods are.
func TestLayerNilReceivers(t *testing.T) {
	x := tensor.Ones([]int{2, 3, 4})
	var (
		bn  *nn.BatchNormLayer
		gn  *nn.GroupNormLayer
		gc  *nn.GRUCell
		rnn *nn.RNN
		gru *nn.GRU
		ls  *nn.LSTM
		so  *nn.StackOptions
		mha *nn.MultiheadAttention
		tel *nn.TransformerEncoderLayer
		enc *nn.TransformerEncoder
	)
	for i, f := range []func(){
		func() { bn.Forward(x) }, func() { bn.Slots() }, func() { bn.SetTraining(true) },
		func() { gn.Forward(x) }, func() { gn.Slots() },
		func() { gc.Forward(x, nil) }, func() { gc.Slots() },
		func() { rnn.Forward(x, nil) }, func() { rnn.Slots() },
		func() { gru.Forward(x, nil) }, func() { gru.Slots() },
		func() { ls.Forward(x, nil, nil) }, func() { ls.Slots() }, func() { so.SetTraining(false) },
		func() { mha.Forward(x, x, x, nn.AttentionMasks{}) }, func() { mha.Slots() }, func() { mha.Children() }, func() { mha.SetTraining(true) },
		func() { tel.Forward(x) }, func() { tel.ForwardMasked(x, nn.AttentionMasks{}) }, func() { tel.Children() },
		func() { enc.Forward(x) }, func() { enc.ForwardMasked(x, nn.AttentionMasks{}) }, func() { enc.Children() },
	} {
		if err := tensor.Catch(f); !errors.Is(err, tensor.ErrArgument) || !strings.Contains(err.Error(), "the receiver is a nil") {
			t.Errorf("case %d: %v, want ErrArgument for the nil receiver", i, err)
		}
	}
}
