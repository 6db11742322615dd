package optim

import (
	"fmt"
	"slices"

	"github.com/tessera-ml/tessera/tensor"
)

// A Group is a parameter group, an entry of torch.optim's
// param_groups: parameters updated with the same hyper-parameters. Set
// the embedded Hyper's fields between steps to change them (as a
// schedule sets LR); Step checks them.
type Group struct {
	Hyper
	params []*tensor.Tensor
	// initialLR is the learning rate the first schedule found, PyTorch's
	// group["initial_lr"]: the base rate of every later schedule.
	initialLR    float64
	hasInitialLR bool
}

// Params returns the group's parameters.
func (g *Group) Params() []*tensor.Tensor {
	checkArg("Group.Params", g != nil, "the group is nil")
	return slices.Clone(g.params)
}

// paramState is the state of one parameter: its step count and its
// buffers, named by the optimizer's kind.
type paramState struct {
	step int
	bufs []*tensor.Tensor
}

// buf returns buffer k of the parameter p, creating it filled with v
// (kept out of every Scope) when it does not exist yet.
func (s *paramState) buf(k int, p *tensor.Tensor, v float64) *tensor.Tensor {
	if s.bufs[k] == nil {
		// Realized now: state updated in place every step stays a
		// buffer, never a pending expression (tensor.SetFusion).
		s.bufs[k] = tensor.FullLike(p.Detach(), v).Keep()
		tensor.Realize(s.bufs[k])
	}
	return s.bufs[k]
}

// kind describes an optimizer: its name, the options it has, the
// names of its per-parameter buffers, those a parameter that has
// stepped must have under hyper-parameters h, and a check of h beyond
// Hyper.check.
type kind struct {
	name     string
	options  []string
	buffers  []string
	required func(h *Hyper) []int
	check    func(h *Hyper) string
}

// base holds what every optimizer shares: its kind, its groups and the
// state of every parameter, indexed as PyTorch packs them (group after
// group).
type base struct {
	kind
	defaults Hyper
	groups   []*Group
	state    []paramState
}

// newBase returns a base of kind k whose first group is params with the
// hyper-parameters defaults and opts make. It panics with ErrArgument
// for no parameters and as AddParamGroup.
func newBase(k kind, params []*tensor.Tensor, defaults Hyper, opts []Option) base {
	b := base{kind: k}
	b.defaults = b.hyper(defaults, opts)
	if len(params) == 0 {
		fail(k.name, "optimizer got an empty parameter list")
	}
	b.addGroup(params, b.defaults)
	return b
}

// hyper applies opts over h, checking them.
func (b *base) hyper(h Hyper, opts []Option) Hyper {
	h = newConfig(b.name, h, opts, b.options)
	if b.check != nil {
		if msg := b.check(&h); msg != "" {
			fail(b.name, "%s", msg)
		}
	}
	return h
}

// AddParamGroup adds a parameter group of params (which may be empty),
// with the hyper-parameters of the constructor's options overridden by
// opts, as torch.optim.Optimizer.add_param_group. It panics with
// ErrArgument for an option the optimizer does not have or a value out
// of range, and for a parameter that is nil, not a float leaf, given
// twice or already in a group.
func (b *base) AddParamGroup(params []*tensor.Tensor, opts ...Option) {
	b.addGroup(params, b.hyper(b.defaults, opts))
}

func (b *base) addGroup(params []*tensor.Tensor, h Hyper) {
	seen := map[*tensor.Tensor]bool{}
	for _, g := range b.groups {
		for _, p := range g.params {
			seen[p] = true
		}
	}
	for i, p := range params {
		if p == nil || !p.IsLeaf() || !p.DType().IsFloat() {
			fail(b.name, "parameter %d must be a float leaf tensor", i)
		}
		if seen[p] {
			fail(b.name, "parameter %d appears twice or in more than one parameter group", i)
		}
		seen[p] = true
	}
	b.groups = append(b.groups, &Group{Hyper: h, params: slices.Clone(params)})
	b.state = append(b.state, make([]paramState, len(params))...)
	for i := len(b.state) - len(params); i < len(b.state); i++ {
		b.state[i].bufs = make([]*tensor.Tensor, len(b.buffers))
	}
}

// Groups returns the parameter groups, in order.
func (b *base) Groups() []*Group { return slices.Clone(b.groups) }

// Params returns the parameters of every group, group after group.
func (b *base) Params() []*tensor.Tensor {
	var out []*tensor.Tensor
	for _, g := range b.groups {
		out = append(out, g.params...)
	}
	return out
}

// ZeroGrad sets every parameter's gradient to nil.
func (b *base) ZeroGrad() {
	for _, g := range b.groups {
		for _, p := range g.params {
			p.SetGrad(nil)
		}
	}
}

// accepts reports whether the optimizer has the option named name
// (OneCycleLR cycles Momentum or Betas).
func (b *base) accepts(name string) bool { return slices.Contains(b.options, name) }

// step checks every group's hyper-parameters, then runs update for each
// parameter that has a gradient, under NoGrad in the parameter's
// context (tensor.Context), handing it the group's hyper-parameters, the
// parameter's state (its step count already advanced) and the gradient
// (negated for Maximize, plus the L2 term when l2 is true), and
// releasing the temporaries afterwards.
func (b *base) step(l2 bool, update func(h *Hyper, st *paramState, p, g *tensor.Tensor, tmp *temps)) {
	for i, g := range b.groups {
		msg := g.Hyper.check()
		if msg == "" && b.check != nil {
			msg = b.check(&g.Hyper)
		}
		if msg != "" {
			fail(b.name+".Step", "parameter group %d: %s", i, msg)
		}
	}
	i := 0
	for _, grp := range b.groups {
		h := grp.Hyper
		for _, p := range grp.params {
			st := &b.state[i]
			i++
			g := p.Grad()
			if g == nil {
				continue
			}
			p.Context().NoGrad(func() {
				var tmp temps
				if h.Maximize {
					g = tmp.add(g.Neg())
				}
				if l2 && h.WeightDecay != 0 {
					g = tmp.add(g.Add(tmp.add(p.MulScalar(h.WeightDecay))))
				}
				st.step++
				update(&h, st, p, g, &tmp)
				tmp.release()
			})
		}
	}
}

// stateName is PyTorch's name of buffer k of the parameter of index i.
func (b *base) stateName(i, k int) string { return fmt.Sprintf("state.%d.%s", i, b.buffers[k]) }
