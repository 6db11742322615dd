package nn

import (
	"fmt"
	"iter"
	"reflect"
	"strings"

	"github.com/tessera-ml/tessera/tensor"
)

// walker visits the modules of a tree depth first, a module before its
// children, children in order.
type walker struct {
	op    string
	dedup bool         // visit a module reached twice only once (PyTorch's memo)
	seen  map[any]bool // pointer modules visited
	path  map[any]bool // pointer modules on the current path: a cycle check
	visit func(prefix string, m Module, slots []Slot) bool
}

// walk calls visit for m and every module below it with its dotted
// prefix ("" for m, "body.0" for a grandchild) and its validated slots,
// until visit returns false. With dedup, a module reached by two paths is
// visited once. It panics with ErrArgument for a nil module, a bad name
// and a module that contains itself.
func walk(op string, m Module, dedup bool, visit func(prefix string, m Module, slots []Slot) bool) {
	w := &walker{op: op, dedup: dedup, seen: map[any]bool{}, path: map[any]bool{}, visit: visit}
	w.walk("", m)
}

func (w *walker) walk(prefix string, m Module) bool {
	if m == nil {
		fail(w.op, tensor.ErrArgument, fmt.Sprintf("module %q is nil", prefix))
	}
	if v := reflect.ValueOf(m); v.Kind() == reflect.Pointer {
		if v.IsNil() {
			fail(w.op, tensor.ErrArgument, fmt.Sprintf("module %q is a nil %T", prefix, m))
		}
		if w.path[m] {
			fail(w.op, tensor.ErrArgument, fmt.Sprintf("module %q contains itself", prefix))
		}
		if w.dedup && w.seen[m] {
			return true
		}
		w.seen[m], w.path[m] = true, true
		defer delete(w.path, m)
	}
	slots, children := w.parts(prefix, m)
	if !w.visit(prefix, m, slots) {
		return false
	}
	for _, c := range children {
		if !w.walk(join(prefix, c.Name), c.Module) {
			return false
		}
	}
	return true
}

// parts returns m's slots and children after checking their names.
func (w *walker) parts(prefix string, m Module) ([]Slot, []Child) {
	slots, children := m.Slots(), m.Children()
	names := make(map[string]bool, len(slots)+len(children))
	check := func(name string) {
		if name == "" || strings.Contains(name, ".") || names[name] {
			fail(w.op, tensor.ErrArgument, fmt.Sprintf("module %q (%T): name %q is empty, holds a \".\" or is used twice", prefix, m, name))
		}
		names[name] = true
	}
	for _, s := range slots {
		check(s.Name)
		if s.Ptr == nil {
			fail(w.op, tensor.ErrArgument, fmt.Sprintf("module %q (%T): slot %q has a nil pointer", prefix, m, s.Name))
		}
	}
	for _, c := range children {
		check(c.Name)
	}
	return slots, children
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// named yields the non-nil tensors of m's slots of one kind (buffers or
// parameters) under their dotted names, each tensor once.
func named(op string, m Module, buffers bool) iter.Seq2[string, *tensor.Tensor] {
	return func(yield func(string, *tensor.Tensor) bool) {
		seen := map[*tensor.Tensor]bool{}
		walk(op, m, true, func(prefix string, _ Module, slots []Slot) bool {
			for _, s := range slots {
				t := *s.Ptr
				if t == nil || s.Buffer != buffers || seen[t] {
					continue
				}
				seen[t] = true
				if !yield(join(prefix, s.Name), t) {
					return false
				}
			}
			return true
		})
	}
}

func values(seq iter.Seq2[string, *tensor.Tensor]) []*tensor.Tensor {
	var out []*tensor.Tensor
	for _, t := range seq {
		out = append(out, t)
	}
	return out
}

// NamedModules yields m (named "") and every module below it with its
// dotted name, depth first, a module before its children; a module
// reached twice is yielded once, as torch.nn.Module.named_modules. It
// panics with ErrArgument for a nil module, a bad name or a cycle.
func NamedModules(m Module) iter.Seq2[string, Module] {
	return func(yield func(string, Module) bool) {
		walk("NamedModules", m, true, func(prefix string, m Module, _ []Slot) bool { return yield(prefix, m) })
	}
}

// NamedParameters yields the parameters of m and of every module below
// it with their dotted names ("0.weight", "layers.1.bias"), in the order
// of NamedModules and then of each module's Slots; a tensor held twice
// (tied weights) is yielded once, under its first name, as
// torch.nn.Module.named_parameters. Panics as NamedModules.
func NamedParameters(m Module) iter.Seq2[string, *tensor.Tensor] {
	return named("NamedParameters", m, false)
}

// Parameters returns the tensors NamedParameters yields, in order: what
// an optimizer updates.
func Parameters(m Module) []*tensor.Tensor { return values(named("Parameters", m, false)) }

// NamedBuffers yields the buffers of m and of every module below it
// ("running_mean", "bn.num_batches_tracked"), as NamedParameters does
// parameters.
func NamedBuffers(m Module) iter.Seq2[string, *tensor.Tensor] { return named("NamedBuffers", m, true) }

// Buffers returns the tensors NamedBuffers yields, in order.
func Buffers(m Module) []*tensor.Tensor { return values(named("Buffers", m, true)) }

// StateDict returns every parameter and buffer of m and the modules
// below it under its dotted name, as torch.nn.Module.state_dict names
// them for the same architecture: a tensor held by two modules (tied
// weights, a shared module) appears under each of its names. The values
// are the module's own tensors, not copies, so loading into the map
// loads into the model in place and optimizers keep their references:
//
//	_, err := checkpoint.LoadInto(f, nn.StateDict(model), true)
//
// Panics as NamedModules.
func StateDict(m Module) map[string]*tensor.Tensor {
	out := map[string]*tensor.Tensor{}
	walk("StateDict", m, false, func(prefix string, _ Module, slots []Slot) bool {
		for _, s := range slots {
			if t := *s.Ptr; t != nil {
				out[join(prefix, s.Name)] = t
			}
		}
		return true
	})
	return out
}
