package optim

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tessera-ml/tessera/tensor"
)

// State is the part of an optimizer's state that is not a tensor: what
// kind of optimizer it is, each group's hyper-parameters, and each
// parameter's step count (0 for one that has not stepped yet), indexed
// as the tensors' names are. It encodes to JSON exactly (for
// checkpoint.SetMeta with checkpoint.MetaOptimizer).
type State struct {
	Optimizer string       `json:"optimizer"`
	Groups    []GroupState `json:"groups"`
	Steps     []int        `json:"steps"`
}

// GroupState is one group of a State: the indices of its parameters and
// its hyper-parameters, with the learning rate a schedule started from
// (PyTorch's initial_lr), if any.
type GroupState struct {
	Params []int `json:"params"`
	Hyper
	InitialLR *float64 `json:"initial_lr,omitempty"`
}

// StateDict returns the optimizer's state tensors, named
// "state.<index>.<buffer>" as torch.optim.Optimizer.state_dict names
// them (the index counts the parameters group after group: see each
// optimizer for its buffers), and its State. The tensors are the
// optimizer's own, not copies: save them before the next Step.
func (b *base) StateDict() (map[string]*tensor.Tensor, State) {
	tensors := map[string]*tensor.Tensor{}
	st := State{Optimizer: b.name, Groups: []GroupState{}, Steps: []int{}}
	i := 0
	for _, g := range b.groups {
		gs := GroupState{Params: []int{}, Hyper: g.Hyper}
		if g.hasInitialLR {
			v := g.initialLR
			gs.InitialLR = &v
		}
		for range g.params {
			gs.Params = append(gs.Params, i)
			i++
		}
		st.Groups = append(st.Groups, gs)
	}
	for i, ps := range b.state {
		st.Steps = append(st.Steps, ps.step)
		for k, t := range ps.bufs {
			if t != nil {
				tensors[b.stateName(i, k)] = t
			}
		}
	}
	return tensors, st
}

// LoadStateDict replaces the optimizer's state by tensors and st, as
// StateDict returned them from an optimizer of the same kind over
// parameters of the same shapes in the same groups, and its groups'
// hyper-parameters by st's, as torch.optim.Optimizer.load_state_dict:
// each tensor is copied, cast to its parameter's dtype and moved to its
// device. It loads all or nothing: it returns a *tensor.Error naming
// every problem, wrapping ErrShape for a tensor of another shape and
// ErrArgument otherwise (another optimizer; other groups; a name that is
// not an optimizer buffer of a parameter that has stepped; a buffer
// missing for one that has; a hyper-parameter out of range), and
// changes nothing.
func (b *base) LoadStateDict(tensors map[string]*tensor.Tensor, st State) error {
	params := b.Params()
	var problems []string
	errKind := tensor.ErrArgument
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	groups := b.checkGroups(st, len(params), bad)
	staged := make([][]*tensor.Tensor, len(params))
	given := map[[2]int]bool{} // buffers present, well-formed or not
	for i := range staged {
		staged[i] = make([]*tensor.Tensor, len(b.buffers))
	}
	for _, name := range slices.Sorted(maps.Keys(tensors)) {
		t := tensors[name]
		i, k, ok := b.parseName(name, len(params))
		if ok {
			given[[2]int{i, k}] = true
		}
		switch {
		case !ok:
			bad("%q is not the name of a %s buffer of one of its %d parameters", name, b.name, len(params))
		case t == nil || !t.DType().IsFloat():
			bad("%q is not a float tensor", name)
		case !slices.Equal(t.Shape(), params[i].Shape()):
			bad("%q has shape %v but its parameter %v", name, t.Shape(), params[i].Shape())
			errKind = tensor.ErrShape
		case len(st.Steps) == len(params) && st.Steps[i] == 0:
			bad("%q belongs to a parameter that has not stepped", name)
		default:
			staged[i][k] = t
		}
	}
	if len(st.Steps) == len(params) && len(groups) == len(b.groups) {
		i := 0
		for gi, g := range b.groups {
			for range g.params {
				if st.Steps[i] > 0 {
					for _, k := range b.required(&groups[gi]) {
						if !given[[2]int{i, k}] {
							bad("%q is missing for a parameter that has stepped %d times", b.stateName(i, k), st.Steps[i])
						}
					}
				}
				i++
			}
		}
	}
	if len(problems) > 0 {
		return &tensor.Error{Op: "optim." + b.name + ".LoadStateDict", Err: errKind, Detail: "nothing loaded: " + strings.Join(problems, "; ")}
	}
	copies, err := copyState(staged, params)
	if err != nil {
		return &tensor.Error{Op: "optim." + b.name + ".LoadStateDict", Err: err, Detail: "nothing loaded: " + err.Error()}
	}
	for gi, g := range b.groups {
		g.Hyper = groups[gi]
		g.hasInitialLR = st.Groups[gi].InitialLR != nil
		if g.hasInitialLR {
			g.initialLR = *st.Groups[gi].InitialLR
		}
	}
	for i := range b.state {
		b.state[i] = paramState{step: st.Steps[i], bufs: copies[i]}
	}
	return nil
}

// checkGroups checks st's optimizer, groups, hyper-parameters and step
// counts against b with n parameters, reporting problems through bad,
// and returns st's hyper-parameters group by group.
func (b *base) checkGroups(st State, n int, bad func(string, ...any)) []Hyper {
	if st.Optimizer != b.name {
		bad("the state is a %q optimizer's, not %s's", st.Optimizer, b.name)
	}
	if len(st.Groups) != len(b.groups) {
		bad("the state has %d parameter groups, the optimizer %d", len(st.Groups), len(b.groups))
		return nil
	}
	var out []Hyper
	next := 0
	for gi, gs := range st.Groups {
		want := make([]int, len(b.groups[gi].params))
		for j := range want {
			want[j] = next + j
		}
		next += len(want)
		if !slices.Equal(gs.Params, want) {
			bad("group %d holds parameters %v in the state, %v in the optimizer", gi, gs.Params, want)
		}
		h := gs.Hyper
		msg := h.check()
		if msg == "" && b.check != nil {
			msg = b.check(&h)
		}
		if msg != "" {
			bad("group %d: %s", gi, msg)
		}
		if v := gs.InitialLR; v != nil && !(*v >= 0 && !math.IsInf(*v, 1)) {
			bad("group %d: invalid initial learning rate %g", gi, *v)
		}
		out = append(out, h)
	}
	if len(st.Steps) != n {
		bad("the state counts the steps of %d parameters, the optimizer has %d", len(st.Steps), n)
	}
	for i, s := range st.Steps {
		if s < 0 {
			bad("parameter %d has a negative step count %d", i, s)
		}
	}
	return out
}

// parseName splits "state.<i>.<buffer>" into the parameter index i < n
// and the buffer's index.
func (b *base) parseName(name string, n int) (i, k int, ok bool) {
	rest, found := strings.CutPrefix(name, "state.")
	idx, buf, found2 := strings.Cut(rest, ".")
	if !found || !found2 {
		return 0, 0, false
	}
	i, err := strconv.Atoi(idx)
	k = slices.Index(b.buffers, buf)
	if err != nil || i < 0 || i >= n || strconv.Itoa(i) != idx || k < 0 {
		return 0, 0, false
	}
	return i, k, true
}

// copyState returns kept copies of the staged tensors in their
// parameters' dtypes and on their devices, or an error (and no copies)
// when one cannot be made.
func copyState(staged [][]*tensor.Tensor, params []*tensor.Tensor) ([][]*tensor.Tensor, error) {
	out := make([][]*tensor.Tensor, len(staged))
	var tmp temps
	defer tmp.release()
	err := tensor.Catch(func() {
		for i, bufs := range staged {
			out[i] = make([]*tensor.Tensor, len(bufs))
			for k, t := range bufs {
				if t == nil {
					continue
				}
				p := params[i]
				p.Context().NoGrad(func() {
					c := tensor.ZerosLike(tmp.add(p.Detach())).Keep()
					out[i][k] = c
					src := tmp.add(t.Detach())
					// Cast where float64 can live: on the CPU.
					if p.Device() == tensor.CPU {
						src = tmp.add(tmp.add(src.To(p.Device())).Cast(p.DType()))
					} else {
						src = tmp.add(tmp.add(src.Cast(p.DType())).To(p.Device()))
					}
					c.CopyFrom(src)
				})
			}
		}
	})
	if err != nil {
		for _, bufs := range out {
			for _, t := range bufs {
				if t != nil {
					t.Release()
				}
			}
		}
		return nil, err
	}
	return out, nil
}
