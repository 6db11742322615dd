package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tessera-ml/tessera/tensor"
)

// Conventional metadata keys of a training checkpoint. The values are
// JSON, written with SetMeta and read with GetMeta.
const (
	MetaStep       = "step"       // the number of optimizer steps taken, an integer
	MetaLoader     = "loader"     // the data loader's position, a LoaderState
	MetaGenerators = "generators" // random generators by name, map[string]GeneratorState
	MetaOptimizer  = "optimizer"  // the optimizer's hyper-parameters, as its own type marshals them
	MetaSchedule   = "schedule"   // the learning-rate schedule's state, as its own type marshals it
)

// LoaderState is where a data loader stands: the seed of its shuffle,
// the epoch, the position in that epoch's order and the examples seen.
// It has the fields of data.State, which converts to it and back:
// checkpoint.LoaderState(loader.State()).
type LoaderState struct {
	Seed     uint64 `json:"seed"`
	Shuffle  bool   `json:"shuffle"`
	Epoch    int    `json:"epoch"`
	Position int    `json:"position"`
	Examples int    `json:"examples"`
}

// GeneratorState is the state of a tensor.Generator: its seed and the
// offset of its Philox stream.
type GeneratorState struct {
	Seed   uint64 `json:"seed"`
	Offset uint64 `json:"offset"`
}

// SetMeta stores v in meta[key] as JSON (see encoding/json). It fails
// when meta is nil (wrapping tensor.ErrArgument) or v cannot be
// marshalled (a NaN, a channel), and then leaves meta as it was.
func SetMeta(meta map[string]string, key string, v any) error {
	if meta == nil {
		return fmt.Errorf("checkpoint.SetMeta %q: %w: the metadata map is nil", key, tensor.ErrArgument)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("checkpoint.SetMeta %q: %w", key, err)
	}
	meta[key] = string(b)
	return nil
}

// GetMeta decodes the JSON in meta[key] into v, a pointer, strictly: a
// field v does not have, a value of another type or anything after the
// value is an error wrapping ErrFormat, naming the key, and an absent
// key is an error wrapping ErrNoMeta.
func GetMeta(meta map[string]string, key string, v any) error {
	if err := getMeta(meta, key, v); err != nil {
		return fmt.Errorf("checkpoint.GetMeta: %w", err)
	}
	return nil
}

// GetMeta decodes f.Meta[key] into v, as GetMeta does; the error is a
// *FileError naming f.
func (f *File) GetMeta(key string, v any) error {
	if err := getMeta(f.Meta, key, v); err != nil {
		return &FileError{Op: "GetMeta", Path: f.Path, Detail: err.Error(), Err: err}
	}
	return nil
}

func getMeta(meta map[string]string, key string, v any) error {
	s, ok := meta[key]
	if !ok {
		return fmt.Errorf("%w %q", ErrNoMeta, key)
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, end := dec.Token(); end != io.EOF {
			err = errors.New("more follows the value")
		}
	}
	if err != nil {
		return fmt.Errorf("metadata %q: %w: %.80q does not decode into %T: %v", key, ErrFormat, s, v, err)
	}
	return nil
}
