package ddp_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/ddp"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/tensor"
)

// TestConcurrentMismatchNamesRankAndParameter: ranks whose models differ
// all get the same *ddp.Error wrapping ErrMismatch, naming the lowest
// rank that differs from rank 0 and the first parameter where it does.
func TestConcurrentMismatchNamesRankAndParameter(t *testing.T) {
	tests := []struct {
		name      string
		world     int
		model     func(rank int, c *tensor.Context) nn.Module
		rank      int
		param     string
		mentioned []string // in the message
	}{
		{"shape", 2, func(rank int, c *tensor.Context) nn.Module {
			return mlp([]int{6, 16 - rank, 4}, 1, tensor.CPU, c)
		}, 1, "0.weight", []string{"[15 6]", "[16 6]"}},
		{"dtype on the last of three ranks", 3, func(rank int, c *tensor.Context) nn.Module {
			dt := tensor.Float32
			if rank == 2 {
				dt = tensor.Float64
			}
			return nn.NewMLP([]int{6, 8, 4}, nil, tensor.Of(dt), tensor.In(c))
		}, 2, "0.weight", []string{"float64", "float32"}},
		{"a layer more", 2, func(rank int, c *tensor.Context) nn.Module {
			return mlp([]int{6, 8, 4, 4}[:3+rank], 1, tensor.CPU, c)
		}, 1, "4.weight", []string{"where rank 0 holds nothing"}},
		{"a frozen parameter", 2, func(rank int, c *tensor.Context) nn.Module {
			m := mlp([]int{6, 8, 4}, 1, tensor.CPU, c)
			if rank == 1 {
				m.Layers[2].(*nn.LinearLayer).Bias.SetRequiresGrad(false)
			}
			return m
		}, 1, "2.bias", []string{"requiring grad"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs := make([]string, tt.world)
			spawn(t, tt.world, func(rank int, g ddp.Group, c *tensor.Context) error {
				_, err := ddp.New(tt.model(rank, c), g, ddp.Options{})
				var e *ddp.Error
				if !errors.As(err, &e) || !errors.Is(err, ddp.ErrMismatch) {
					return fmt.Errorf("New = %v, want a *ddp.Error wrapping ErrMismatch", err)
				}
				if e.Rank != tt.rank || e.Param != tt.param {
					return fmt.Errorf("New = %v: rank %d, parameter %q; want rank %d, %q", err, e.Rank, e.Param, tt.rank, tt.param)
				}
				for _, s := range tt.mentioned {
					if !strings.Contains(err.Error(), s) {
						return fmt.Errorf("New = %v, want it to mention %q", err, s)
					}
				}
				msgs[rank] = err.Error()
				return nil
			})
			for rank := 1; rank < tt.world; rank++ {
				if msgs[rank] != msgs[0] {
					t.Errorf("rank %d says %q, rank 0 %q", rank, msgs[rank], msgs[0])
				}
			}
			t.Log(msgs[0])
		})
	}
}

// TestNewChecksArguments: misuse is an *Error wrapping
// tensor.ErrArgument, and communicates nothing.
func TestNewChecksArguments(t *testing.T) {
	g := ddp.NewLocalGroups(1, 0)[0]
	m := mlp([]int{2, 2}, 1, tensor.CPU, tensor.NewContext())
	for _, tt := range []struct {
		name  string
		m     nn.Module
		g     ddp.Group
		bytes int
	}{
		{"nil module", nil, g, 0},
		{"nil group", m, nil, 0},
		{"negative bucket size", m, g, -1},
		{"a rank outside its group", m, fakeGroup{rank: 2, size: 2}, 0},
	} {
		_, err := ddp.New(tt.m, tt.g, ddp.Options{BucketBytes: tt.bytes})
		var e *ddp.Error
		if !errors.As(err, &e) || !errors.Is(err, tensor.ErrArgument) {
			t.Errorf("%s: New = %v, want a *ddp.Error wrapping tensor.ErrArgument", tt.name, err)
		}
	}
}

// TestWorldOfOne: one rank needs no collective after New, and Backward
// is autograd.Backward.
func TestWorldOfOne(t *testing.T) {
	c := tensor.NewContext()
	model := mlp(sizes, 1, tensor.CPU, c)
	r, err := ddp.New(model, ddp.NewLocalGroups(1, 0)[0], ddp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if b := r.Buckets(); len(b) != 0 {
		t.Errorf("a world of one has buckets %v", b)
	}
	h, err := train(model, r, c, func(step int) (x, y *tensor.Tensor) {
		return problem.batch([]int{step, step + 1}, tensor.CPU, c)
	}, 2)
	if err != nil {
		t.Fatal(err)
	}
	c2 := tensor.NewContext()
	alone, _ := train(mlp(sizes, 1, tensor.CPU, c2), nil, c2, func(step int) (x, y *tensor.Tensor) {
		return problem.batch([]int{step, step + 1}, tensor.CPU, c2)
	}, 2)
	if d := bitwiseEqual(h.params[1], alone.params[1]); d != "" {
		t.Errorf("a world of one differs from autograd.Backward: %s", d)
	}
}
