package nn

import (
	"github.com/tessera-ml/tessera/tensor"
)

// To moves every parameter and buffer of m and the modules below it to
// dev, as torch.nn.Module.to: each is replaced by a copy on dev (a leaf
// that requires grad as the original did, its gradient moved with it;
// buffers kept out of every Scope), a tensor held twice by one copy, so
// tied weights stay tied. Tensors already on dev stay as they are. An
// optimizer holds the tensors it was given: call To before building it.
// It moves all or nothing: it panics with ErrDevice when dev is not
// available and with ErrDType for a float64 tensor and a GPU, leaving m
// as it was, and panics as NamedModules for a malformed tree.
func To(m Module, dev tensor.Device) {
	type move struct {
		ptr **tensor.Tensor
		to  *tensor.Tensor
	}
	var moves []move
	moved := map[*tensor.Tensor]*tensor.Tensor{}
	defer func() {
		if r := recover(); r != nil {
			for _, t := range moved {
				if g := t.Grad(); g != nil {
					g.Release()
				}
				t.Release()
			}
			panic(r)
		}
	}()
	walk("To", m, true, func(_ string, _ Module, slots []Slot) bool {
		for _, s := range slots {
			t := *s.Ptr
			if t == nil || t.Device() == dev {
				continue
			}
			if moved[t] == nil {
				moved[t] = moveTensor(t, dev)
			}
			moves = append(moves, move{s.Ptr, moved[t]})
		}
		return true
	})
	for _, mv := range moves {
		*mv.ptr = mv.to
	}
}

// moveTensor returns a kept copy of t on dev that requires grad as t
// does and holds t's gradient moved to dev.
func moveTensor(t *tensor.Tensor, dev tensor.Device) *tensor.Tensor {
	var out *tensor.Tensor
	t.Context().NoGrad(func() {
		d := t.Detach()
		out = d.To(dev).Keep()
		d.Release()
		if t.RequiresGrad() {
			out.SetRequiresGrad(true)
		}
		if g := t.Grad(); g != nil {
			gd := g.To(dev)
			if gd == g {
				gd = g.Clone()
			}
			out.SetGrad(gd)
		}
	})
	return out
}

// Train switches m and every module below it that has a mode
// (ModeSetter: dropout, batch norm) to training, as
// torch.nn.Module.train(). Panics as NamedModules.
func Train(m Module) { setMode("Train", m, true) }

// Eval switches m and every module below it that has a mode to
// evaluation, as torch.nn.Module.eval(). Panics as NamedModules.
func Eval(m Module) { setMode("Eval", m, false) }

func setMode(op string, m Module, on bool) {
	walk(op, m, true, func(_ string, m Module, _ []Slot) bool {
		if s, ok := m.(ModeSetter); ok {
			s.SetTraining(on)
		}
		return true
	})
}

// Freeze stops gradients for every parameter of m and the modules below
// it (requires_grad_(False) on each), so backward leaves their Grad nil
// and optimizers skip them; buffers are untouched. Panics as
// NamedModules.
func Freeze(m Module) {
	for _, p := range values(named("Freeze", m, false)) {
		p.SetRequiresGrad(false).Keep()
	}
}

// Unfreeze makes every parameter of m and the modules below it require
// grad again. Panics as NamedModules.
func Unfreeze(m Module) {
	for _, p := range values(named("Unfreeze", m, false)) {
		p.SetRequiresGrad(true)
	}
}
