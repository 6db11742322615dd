package train

import (
	"fmt"
	"maps"

	"github.com/tessera-ml/tessera/checkpoint"
	"github.com/tessera-ml/tessera/data"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
)

// Metadata keys of a training checkpoint beside checkpoint's Meta* keys.
const (
	metaProgram = "program" // the program's name
	metaExtra   = "extra"   // the task's own JSON value
	metaHistory = "history" // the curves so far
)

// generators returns the state's generators with def, the rank's
// default one (Run.Generator), as "default".
func (s *State) generators(def *tensor.Generator) map[string]*tensor.Generator {
	g := maps.Clone(s.Generators)
	if g == nil {
		g = map[string]*tensor.Generator{}
	}
	g["default"] = def
	return g
}

// save writes a checkpoint of s after step steps of a world of world
// ranks into path, atomically, def being the rank's default generator.
// It reads s and changes nothing in it, whether it fails or not.
func save(path, program string, steps, world int, s *State, def *tensor.Generator, hist *History) error {
	tensors, meta, err := contents(program, steps, world, s, def, hist)
	if err != nil {
		return err
	}
	return checkpoint.Save(path, tensors, meta)
}

// contents returns the tensors and the metadata of a checkpoint of s
// after step steps of a world of world ranks: rank 0's state, whose
// loader position is in the examples of its shard, and def, its default
// generator.
func contents(program string, steps, world int, s *State, def *tensor.Generator, hist *History) (map[string]*tensor.Tensor, map[string]string, error) {
	tensors := map[string]*tensor.Tensor{}
	meta := map[string]string{}
	set := func(key string, v any) error { return checkpoint.SetMeta(meta, key, v) }
	if err := set(metaProgram, program); err != nil {
		return nil, nil, err
	}
	if err := set(checkpoint.MetaStep, steps); err != nil {
		return nil, nil, err
	}
	if err := set(metaWorld, world); err != nil {
		return nil, nil, err
	}
	if s.Model != nil {
		for name, t := range nn.StateDict(s.Model) {
			tensors["model."+name] = t
		}
	}
	if s.Optimizer != nil {
		ts, st := s.Optimizer.StateDict()
		for name, t := range ts {
			tensors["optimizer."+name] = t
		}
		if err := set(checkpoint.MetaOptimizer, st); err != nil {
			return nil, nil, err
		}
	}
	if s.Schedule != nil {
		if err := set(checkpoint.MetaSchedule, s.Schedule.State()); err != nil {
			return nil, nil, err
		}
	}
	if s.Loader != nil {
		if err := set(checkpoint.MetaLoader, checkpoint.LoaderState(s.Loader.State())); err != nil {
			return nil, nil, err
		}
	}
	gens := map[string]checkpoint.GeneratorState{}
	for name, g := range s.generators(def) {
		seed, off := g.State()
		gens[name] = checkpoint.GeneratorState{Seed: seed, Offset: off}
	}
	if err := set(checkpoint.MetaGenerators, gens); err != nil {
		return nil, nil, err
	}
	for name, p := range s.Tensors {
		tensors["extra."+name] = *p
	}
	if s.Extra != nil {
		if err := set(metaExtra, s.Extra); err != nil {
			return nil, nil, err
		}
	}
	if err := set(metaHistory, hist); err != nil {
		return nil, nil, err
	}
	return tensors, meta, nil
}

// restore loads the checkpoint at path into s, the rank's default
// generator and hist, for rank r (on its device, in its context, in a
// world of r.World ranks), and returns the step it was saved after. It
// checks the program's name and loads the model strictly; nothing is
// half loaded when the model or the optimizer does not match. A loader
// resumes at the same place of its epoch whatever world saved it (see
// rescale); a checkpoint without a world size is of a world of one.
func restore(path, program string, s *State, hist *History, r *Run) (int, error) {
	def, world := r.generator(), max(r.World, 1)
	f, err := checkpoint.Load(path, checkpoint.On(r.Device), checkpoint.In(r.context()))
	if err != nil {
		return 0, err
	}
	var name string
	var step int
	if err := f.GetMeta(metaProgram, &name); err != nil {
		return 0, err
	}
	if name != program {
		return 0, fmt.Errorf("%s is a checkpoint of %s, not of %s", path, name, program)
	}
	if err := f.GetMeta(checkpoint.MetaStep, &step); err != nil {
		return 0, err
	}
	if s.Model != nil {
		if _, err := checkpoint.LoadInto(f.Sub("model."), nn.StateDict(s.Model), true); err != nil {
			return 0, err
		}
	}
	if s.Optimizer != nil {
		var st optim.State
		if err := f.GetMeta(checkpoint.MetaOptimizer, &st); err != nil {
			return 0, err
		}
		if err := s.Optimizer.LoadStateDict(f.Sub("optimizer.").Tensors, st); err != nil {
			return 0, fmt.Errorf("%s: optimizer: %w", path, err)
		}
	}
	if s.Schedule != nil {
		var st optim.ScheduleState
		if err := f.GetMeta(checkpoint.MetaSchedule, &st); err != nil {
			return 0, err
		}
		if err := s.Schedule.LoadState(st); err != nil {
			return 0, fmt.Errorf("%s: schedule: %w", path, err)
		}
	}
	if s.Loader != nil {
		var st checkpoint.LoaderState
		if err := f.GetMeta(checkpoint.MetaLoader, &st); err != nil {
			return 0, err
		}
		saved := 1
		if _, ok := f.Meta[metaWorld]; ok {
			if err := f.GetMeta(metaWorld, &saved); err != nil {
				return 0, err
			}
		}
		ls, err := rescale(data.State(st), saved, world)
		if err != nil {
			return 0, err
		}
		if err := s.Loader.Restore(ls); err != nil {
			return 0, fmt.Errorf("%s: data loader: %w", path, err)
		}
	}
	var gens map[string]checkpoint.GeneratorState
	if err := f.GetMeta(checkpoint.MetaGenerators, &gens); err != nil {
		return 0, err
	}
	for name, g := range s.generators(def) {
		st, ok := gens[name]
		if !ok {
			return 0, fmt.Errorf("%s: no state of the random generator %q", path, name)
		}
		g.SetState(st.Seed, st.Offset)
	}
	for name, p := range s.Tensors {
		t, ok := f.Tensors["extra."+name]
		if !ok {
			return 0, fmt.Errorf("%s: no tensor extra.%s", path, name)
		}
		*p = t.Keep()
	}
	if s.Extra != nil {
		if err := f.GetMeta(metaExtra, s.Extra); err != nil {
			return 0, err
		}
	}
	if err := f.GetMeta(metaHistory, hist); err != nil {
		return 0, err
	}
	return step, nil
}
