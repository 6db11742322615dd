package checkpoint

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tessera-ml/tessera/tensor"
)

// Keys lists the names LoadInto did not load: in the destination but
// not the file (Missing) and in the file but not the destination
// (Unexpected), sorted, as torch.nn.Module.load_state_dict returns them.
type Keys struct {
	Missing, Unexpected []string
}

// A Mismatched tensor has the same name in the file and the destination
// but another shape or dtype.
type Mismatched struct {
	Name                 string
	FileShape, DestShape []int
	FileDType, DestDType tensor.DType
}

// A MismatchError reports why LoadInto loaded nothing: names missing
// from the file, names the destination lacks (both only when strict),
// and tensors whose shape or dtype differ. It wraps ErrMismatch, and
// tensor.ErrShape or tensor.ErrDType when a shape or a dtype differs.
type MismatchError struct {
	Path string
	Keys
	Mismatched []Mismatched
}

func (e *MismatchError) Error() string {
	var parts []string
	quote := func(names []string) string {
		q := make([]string, len(names))
		for i, n := range names {
			q[i] = fmt.Sprintf("%q", n)
		}
		return strings.Join(q, ", ")
	}
	if len(e.Missing) > 0 {
		parts = append(parts, "missing from the file: "+quote(e.Missing))
	}
	if len(e.Unexpected) > 0 {
		parts = append(parts, "not in the destination: "+quote(e.Unexpected))
	}
	for _, m := range e.Mismatched {
		parts = append(parts, fmt.Sprintf("%q is %v %v in the file but %v %v in the destination",
			m.Name, m.FileShape, m.FileDType, m.DestShape, m.DestDType))
	}
	return fmt.Sprintf("checkpoint.LoadInto %s: %v, nothing loaded: %s", e.Path, ErrMismatch, strings.Join(parts, "; "))
}

func (e *MismatchError) Unwrap() []error {
	errs := []error{ErrMismatch}
	var shape, dtype bool
	for _, m := range e.Mismatched {
		shape = shape || !slices.Equal(m.FileShape, m.DestShape)
		dtype = dtype || m.FileDType != m.DestDType
	}
	if shape {
		errs = append(errs, tensor.ErrShape)
	}
	if dtype {
		errs = append(errs, tensor.ErrDType)
	}
	return errs
}

// LoadInto copies f's tensors into the tensors of dst with the same
// names, as torch.nn.Module.load_state_dict: a tensor on another device
// is moved first; parameters that require grad are written without
// recording a graph. It loads all or nothing. It fails with a
// *MismatchError, loading nothing, when a tensor differs in shape or
// dtype, and, when strict, also when a name of dst is missing from f or
// a name of f is missing from dst; otherwise it returns those names. It
// fails with a *FileError, also loading nothing, when a tensor of dst is
// nil, released or an expanded view (one memory location for several
// elements), or a tensor cannot move to its destination's device.
func LoadInto(f *File, dst map[string]*tensor.Tensor, strict bool) (Keys, error) {
	var keys Keys
	var bad []Mismatched
	for _, name := range sortedNames(dst) {
		d, s := dst[name], f.Tensors[name]
		if d == nil {
			return Keys{}, &FileError{Op: "LoadInto", Path: f.Path, Detail: fmt.Sprintf("destination %q is nil", name), Err: tensor.ErrArgument}
		}
		switch {
		case s == nil:
			keys.Missing = append(keys.Missing, name)
		case !slices.Equal(s.Shape(), d.Shape()) || s.DType() != d.DType():
			bad = append(bad, Mismatched{name, s.Shape(), d.Shape(), s.DType(), d.DType()})
		}
	}
	for _, name := range f.Names() {
		if _, ok := dst[name]; !ok {
			keys.Unexpected = append(keys.Unexpected, name)
		}
	}
	if len(bad) > 0 || strict && (len(keys.Missing) > 0 || len(keys.Unexpected) > 0) {
		e := &MismatchError{Path: f.Path, Mismatched: bad}
		if strict {
			e.Keys = keys
		}
		return Keys{}, e
	}
	staged, err := stage(f, dst)
	if err != nil {
		return Keys{}, err
	}
	for name, s := range staged {
		d := dst[name]
		d.Context().NoGrad(func() { d.CopyFrom(s) })
		if s != f.Tensors[name] {
			s.Release()
		}
	}
	return keys, nil
}

// stage checks that every destination can be written and returns the
// sources on their destinations' devices, so that nothing can fail once
// copying starts.
func stage(f *File, dst map[string]*tensor.Tensor) (map[string]*tensor.Tensor, error) {
	staged := map[string]*tensor.Tensor{}
	release := func() {
		for name, s := range staged {
			if s != f.Tensors[name] {
				s.Release()
			}
		}
	}
	for _, name := range sortedNames(dst) {
		d, s := dst[name], f.Tensors[name]
		if s == nil {
			continue
		}
		shape, strides := d.Shape(), d.Strides()
		for i := range shape {
			if strides[i] == 0 && shape[i] > 1 {
				release()
				return nil, &FileError{Op: "LoadInto", Path: f.Path, Err: tensor.ErrInPlace,
					Detail: fmt.Sprintf("destination %q is an expanded view (one memory location for several elements); Clone it first", name)}
			}
		}
		err := tensor.Catch(func() {
			d.Detach().Release() // fails on a released tensor
			staged[name] = s.To(d.Device())
		})
		if err != nil {
			release()
			return nil, &FileError{Op: "LoadInto", Path: f.Path, Detail: fmt.Sprintf("destination %q: %v", name, err), Err: err}
		}
	}
	return staged, nil
}

func sortedNames(m map[string]*tensor.Tensor) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
