package ddp

import (
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/tessera-ml/tessera/tensor"
)

// A descriptor is what must agree across the ranks about one parameter
// or buffer.
type descriptor struct {
	name string
	text string // kind, name, shape, dtype and flags, for messages
}

func describe(kind, name string, t *tensor.Tensor) descriptor {
	text := fmt.Sprintf("%s %q of shape %v, %v", kind, name, t.Shape(), t.DType())
	if t.RequiresGrad() {
		text += ", requiring grad"
	}
	return descriptor{name: name, text: text}
}

// hash52 hashes s to 52 bits, which a float64 holds exactly.
func hash52(s ...string) float64 {
	h := fnv.New64a()
	for _, x := range s {
		h.Write([]byte(x))
		h.Write([]byte{0})
	}
	return float64(h.Sum64() & (1<<52 - 1))
}

// checkSame returns an *Error wrapping ErrMismatch, the same on every
// rank, unless every rank holds the descriptors ds. One all-reduce of a
// hash of them (its maximum and the maximum of its negation: they agree
// when all ranks do) answers; when they differ, rank 0's hashes of each
// are broadcast, and each rank reports where it first differs.
func (r *Replica) checkSame(ds []descriptor) error {
	texts := make([]string, len(ds))
	for i, d := range ds {
		texts[i] = d.text
	}
	h := hash52(texts...)
	got, err := r.allReduce([]float64{h, -h, float64(len(ds))}, ReduceMax)
	if err != nil {
		return err
	}
	if got[0] == -got[1] {
		return nil
	}
	// Where does each rank first differ from rank 0?
	n := int(got[2])
	mine := make([]float64, n)
	for i := range mine {
		mine[i] = -1 // nothing there
		if i < len(ds) {
			mine[i] = hash52(ds[i].text)
		}
	}
	root, err := r.broadcastValues(slices.Clone(mine), 0)
	if err != nil {
		return err
	}
	first := make([]float64, r.group.Size()) // rank → 1 + the index of its first difference, 0 for none
	for j := range mine {
		if mine[j] != root[j] {
			first[r.group.Rank()] = float64(j + 1)
			break
		}
	}
	first, err = r.allReduce(first, ReduceMax)
	if err != nil {
		return err
	}
	bad := slices.IndexFunc(first, func(v float64) bool { return v > 0 })
	if bad < 0 { // equal hashes item by item, but not in all: cannot happen
		return &Error{Op: "New", Rank: -1, Err: ErrMismatch, Detail: "the ranks' parameters and buffers hash differently"}
	}
	at := int(first[bad]) - 1
	name, text := "", "nothing"
	if at < len(ds) {
		name, text = ds[at].name, ds[at].text
	}
	name0, err := r.broadcastString(name, 0)
	if err != nil {
		return err
	}
	text0, err := r.broadcastString(text, 0)
	if err != nil {
		return err
	}
	nameBad, err := r.broadcastString(name, bad)
	if err != nil {
		return err
	}
	textBad, err := r.broadcastString(text, bad)
	if err != nil {
		return err
	}
	if nameBad == "" {
		nameBad = name0
	}
	return &Error{Op: "New", Rank: bad, Param: nameBad, Err: ErrMismatch,
		Detail: fmt.Sprintf("it holds %s where rank 0 holds %s (item %d of NamedParameters then NamedBuffers)", textBad, text0, at)}
}

// allReduce reduces values across the ranks as a Float64 tensor.
func (r *Replica) allReduce(values []float64, op ReduceOp) ([]float64, error) {
	t := tensor.From(values, []int{len(values)}, tensor.In(r.ctx))
	defer t.Release()
	if err := r.group.AllReduce(t, op).Wait(); err != nil {
		return nil, wrap("New", err)
	}
	return t.Float64s(), nil
}

// broadcastValues returns root's values, which have the same length on
// every rank.
func (r *Replica) broadcastValues(values []float64, root int) ([]float64, error) {
	t := tensor.From(values, []int{len(values)}, tensor.In(r.ctx))
	defer t.Release()
	if err := r.group.Broadcast(t, root); err != nil {
		return nil, wrap("New", err)
	}
	return t.Float64s(), nil
}

// broadcastString returns root's s: its length first, then its bytes.
func (r *Replica) broadcastString(s string, root int) (string, error) {
	n, err := r.broadcastValues([]float64{float64(len(s))}, root)
	if err != nil {
		return "", err
	}
	b := make([]float64, int(n[0]))
	for i := range b {
		if i < len(s) {
			b[i] = float64(s[i])
		}
	}
	if len(b) == 0 {
		return "", nil
	}
	if b, err = r.broadcastValues(b, root); err != nil {
		return "", err
	}
	out := make([]byte, len(b))
	for i, v := range b {
		out[i] = byte(v)
	}
	return string(out), nil
}

// broadcast copies rank 0's ts into every other rank's, in place, one
// Broadcast of a flat CPU tensor per dtype (op names the caller in
// errors).
func (r *Replica) broadcast(op string, ts []*tensor.Tensor) error {
	var dtypes []tensor.DType
	for _, t := range ts {
		if !slices.Contains(dtypes, t.DType()) {
			dtypes = append(dtypes, t.DType())
		}
	}
	for _, dt := range dtypes {
		var group []*tensor.Tensor
		n := 0
		for _, t := range ts {
			if t.DType() == dt {
				group = append(group, t)
				n += t.Numel()
			}
		}
		if err := r.broadcastFlat(op, group, n); err != nil {
			return err
		}
	}
	return nil
}

// broadcastFlat broadcasts ts, of one dtype and n elements in all, from
// rank 0 through one flat CPU tensor (of Int32 for Bool).
func (r *Replica) broadcastFlat(op string, ts []*tensor.Tensor, n int) error {
	if n == 0 {
		return nil
	}
	var flat *tensor.Tensor
	var err error
	root := r.group.Rank() == 0
	dt := ts[0].DType()
	if dt == tensor.Bool { // travels as Int32, which every Group takes
		dt = tensor.Int32
	}
	r.ctx.NoGrad(func() {
		err = tensor.Catch(func() {
			flat = tensor.Zeros([]int{n}, tensor.Of(dt), tensor.In(r.ctx))
			if root {
				each(flat, ts, copyInto)
			}
		})
	})
	if err != nil {
		return &Error{Op: op, Rank: -1, Err: tensor.ErrArgument, Detail: err.Error()}
	}
	defer flat.Release()
	if err := r.group.Broadcast(flat, 0); err != nil {
		return wrap(op, err)
	}
	if root {
		return nil
	}
	err = tensor.Catch(func() {
		each(flat, ts, func(view, t *tensor.Tensor) { copyInto(t, view) })
	})
	if err != nil {
		return &Error{Op: op, Rank: -1, Err: tensor.ErrArgument, Detail: err.Error()}
	}
	return nil
}

// each calls f with each t of ts and its part of flat, shaped like t.
func each(flat *tensor.Tensor, ts []*tensor.Tensor, f func(view, t *tensor.Tensor)) {
	off := 0
	for _, t := range ts {
		n := t.Numel()
		view := flat.Narrow(0, off, n).Reshape(t.Shape()...)
		f(view, t)
		view.Release()
		off += n
	}
}

// copyInto copies src's values into dst, in place, across devices.
func copyInto(dst, src *tensor.Tensor) {
	d := src.Detach()
	if d.Device() != dst.Device() {
		x := d.To(dst.Device())
		d.Release()
		d = x
	}
	dst.Context().NoGrad(func() { dst.CopyFrom(d) })
	d.Release()
}
