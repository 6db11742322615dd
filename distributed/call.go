package distributed

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"

	"github.com/tessera-ml/tessera/tensor"
)

// A ReduceOp says how AllReduce and ReduceScatter combine the ranks'
// elements.
type ReduceOp uint8

const (
	Sum  ReduceOp = iota // the sum over ranks
	Mean                 // the sum divided by Size, for float tensors only
	Max                  // the largest (MPI_MAX compares with >: whether a NaN wins is MPI's choice)
	Min                  // the smallest
)

const numReduceOps = Min + 1

var reduceNames = [...]string{Sum: "sum", Mean: "mean", Max: "max", Min: "min"}

func (op ReduceOp) String() string {
	if op < numReduceOps {
		return reduceNames[op]
	}
	return fmt.Sprintf("ReduceOp(%d)", uint8(op))
}

// base returns the op the transport runs: Mean is a Sum, then a division.
func (op ReduceOp) base() ReduceOp {
	if op == Mean {
		return Sum
	}
	return op
}

// An opKind names a collective in its descriptor, so that ranks that
// call different collectives at the same point are told so.
type opKind int64

const (
	opAllReduce opKind = 1 + iota
	opBroadcast
	opAllGather
	opReduceScatter
	opBarrier
	opClose
)

var kindNames = [...]string{opAllReduce: "AllReduce", opBroadcast: "Broadcast", opAllGather: "AllGather",
	opReduceScatter: "ReduceScatter", opBarrier: "Barrier", opClose: "Close"}

func (k opKind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("collective %d", int64(k))
}

// A call is one collective as this rank issued it: the tensor, what the
// ranks must agree on, and this rank's argument error, if any.
type call struct {
	g     *Group
	kind  opKind
	arg   int64 // the ReduceOp, or Broadcast's root
	t     *tensor.Tensor
	shape []int
	dtype tensor.DType
	numel int
	err   error // this rank's argument error; the call still takes part
}

// newCall checks the tensor argument of a collective. An unusable tensor
// makes an argument error, not a panic: the call still goes to the other
// ranks (as an invalid descriptor), so that they fail too instead of
// waiting for a rank that gave up.
func (g *Group) newCall(kind opKind, arg int64, t *tensor.Tensor) *call {
	c := &call{g: g, kind: kind, arg: arg, t: t}
	if kind == opBarrier || kind == opClose {
		return c
	}
	if t == nil {
		c.fail(ErrArgument, "the tensor is nil")
		return c
	}
	if err := tensor.Catch(func() { c.shape, c.dtype, c.numel = t.Shape(), t.DType(), t.Numel() }); err != nil {
		c.err = &Error{Op: kind.String(), Rank: g.rank, Err: err}
		return c
	}
	switch c.dtype {
	case tensor.Float32, tensor.Float64, tensor.Int32:
	default:
		c.fail(ErrArgument, "%v tensors are not supported: use float32, float64 or int32 (cast first)", c.dtype)
	}
	return c
}

// fail records this rank's argument error, the first one only.
func (c *call) fail(cause error, format string, args ...any) {
	if c.err == nil {
		c.err = errorf(c.kind.String(), c.g.rank, cause, format, args...)
	}
}

// checkReduce checks op for the call's dtype.
func (c *call) checkReduce(op ReduceOp) {
	switch {
	case op >= numReduceOps:
		c.fail(ErrArgument, "unknown reduce op %v", op)
	case op == Mean && c.err == nil && !c.dtype.IsFloat():
		c.fail(ErrArgument, "Mean of %v tensors: use Sum, or cast to a float dtype", c.dtype)
	}
}

// checkWritable checks that the result can be written into t: an
// expanded view (stride 0) has several elements in one place.
func (c *call) checkWritable() {
	if c.err != nil {
		return
	}
	for i, s := range c.t.Strides() {
		if s == 0 && c.shape[i] > 1 {
			c.fail(ErrArgument, "the tensor %v is an expanded view (stride 0 in dim %d) and cannot hold a result; Clone it first", c.shape, i)
			return
		}
	}
}

// read copies t to a host buffer (a GPU tensor is read back).
func (c *call) read() hostBuf {
	var b hostBuf
	if c.err != nil {
		return b
	}
	err := tensor.Catch(func() {
		switch c.dtype {
		case tensor.Float64:
			b = hostBuf{c.t.Float64s()}
		case tensor.Int32:
			b = hostBuf{c.t.Int32s()}
		default:
			b = hostBuf{c.t.Float32s()}
		}
	})
	if err != nil {
		c.err = &Error{Op: c.kind.String(), Rank: c.g.rank, Err: err, Detail: "reading the tensor"}
	}
	return b
}

// hostKind returns the host buffer kind of the call's dtype.
func (c *call) hostKind() elemKind {
	switch c.dtype {
	case tensor.Float64:
		return kindFloat64
	case tensor.Int32:
		return kindInt32
	}
	return kindFloat32
}

// write copies b into t, in place, outside autograd (as torch.distributed
// writes a parameter it broadcasts).
func (c *call) write(b hostBuf) error {
	err := tensor.Catch(func() {
		c.t.Context().NoGrad(func() {
			src := fromHost(b, c.shape, tensor.Like(c.t))
			c.t.CopyFrom(src)
			src.Release()
		})
	})
	if err != nil {
		return &Error{Op: c.kind.String(), Rank: c.g.rank, Err: err, Detail: "writing the result"}
	}
	return nil
}

// make returns a new tensor like t (dtype, device, context) holding b.
func (c *call) make(b hostBuf, shape []int) (*tensor.Tensor, error) {
	var out *tensor.Tensor
	err := tensor.Catch(func() { out = fromHost(b, shape, tensor.Like(c.t)) })
	if err != nil {
		return nil, &Error{Op: c.kind.String(), Rank: c.g.rank, Err: err, Detail: "making the result"}
	}
	return out, nil
}

func fromHost(b hostBuf, shape []int, opts ...tensor.Option) *tensor.Tensor {
	switch s := b.data.(type) {
	case []float64:
		return tensor.From(s, shape, opts...)
	case []int32:
		return tensor.From(s, shape, opts...)
	}
	return tensor.From(b.data.([]float32), shape, opts...)
}

// issue queues the call: the worker first makes the ranks agree on the
// descriptor (when there is more than one), then runs comm, unless this
// rank's arguments were invalid or comm is nil (nothing to move).
func (c *call) issue(comm func(transport) error) *job {
	d := c.descriptor()
	return c.g.submit(c.kind.String(), func(tr transport) error {
		if c.g.size > 1 {
			if err := c.agree(tr, d); err != nil {
				return err
			}
		}
		if c.err != nil || comm == nil {
			return c.err
		}
		if err := comm(tr); err != nil {
			return errorf(c.kind.String(), c.g.rank, ErrMPI, "%v", err)
		}
		return nil
	})
}

// A descriptor is what the ranks must agree on before a collective moves
// data. Every field is non-negative, so that one MPI_MAX all-reduce of
// (d, -d) gives both the maximum and the minimum over the ranks.
type descriptor [numFields]int64

const (
	fieldKind = iota
	fieldValid
	fieldDType
	fieldNumel
	fieldShape // a hash of the shape
	fieldArg
	numFields
)

func (c *call) descriptor() descriptor {
	var d descriptor
	d[fieldKind] = int64(c.kind)
	if c.err == nil {
		d[fieldValid] = 1
	}
	d[fieldDType] = int64(c.dtype) + 1
	d[fieldNumel] = int64(c.numel)
	d[fieldShape] = shapeHash(c.shape)
	d[fieldArg] = c.arg
	return d
}

// shapeHash hashes the rank and dims of shape (FNV-1a, to 62 bits).
func shapeHash(shape []int) int64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(len(shape)))
	h.Write(b[:])
	for _, n := range shape {
		binary.LittleEndian.PutUint64(b[:], uint64(n))
		h.Write(b[:])
	}
	return int64(h.Sum64() >> 2)
}

// agree all-reduces the descriptor d with MPI_MAX, as (d, -d), and
// returns ErrMismatch unless every rank sent the same d.
func (c *call) agree(tr transport, d descriptor) error {
	var buf [2 * numFields]int64
	for i, v := range d {
		buf[i], buf[numFields+i] = v, -v
	}
	if err := tr.allReduce(hostBuf{buf[:]}, Max); err != nil {
		return errorf(c.kind.String(), c.g.rank, ErrMPI, "exchanging the descriptor: %v", err)
	}
	var hi, lo descriptor
	for i := range hi {
		hi[i], lo[i] = buf[i], -buf[numFields+i]
	}
	if c.err != nil {
		return c.err
	}
	mismatch := func(format string, args ...any) error {
		return errorf(c.kind.String(), c.g.rank, ErrMismatch, format, args...)
	}
	switch {
	case lo[fieldKind] != hi[fieldKind]:
		return mismatch("ranks called different collectives here (%v and %v among them; this rank called %v): "+
			"every rank must issue the same collectives in the same order", opKind(lo[fieldKind]), opKind(hi[fieldKind]), c.kind)
	case lo[fieldValid] == 0:
		return mismatch("another rank called %v with invalid arguments (that rank returns ErrArgument saying why)", c.kind)
	case lo[fieldDType] != hi[fieldDType]:
		return mismatch("dtypes differ across ranks: this rank has %v", c.dtype)
	case lo[fieldNumel] != hi[fieldNumel] || lo[fieldShape] != hi[fieldShape]:
		return mismatch("shapes differ across ranks: this rank has %v %v (%d elements); ranks hold %d to %d elements",
			c.dtype, c.shape, c.numel, lo[fieldNumel], hi[fieldNumel])
	case lo[fieldArg] != hi[fieldArg] && c.kind == opBroadcast:
		return mismatch("roots differ across ranks: this rank has root %d; ranks name roots %d to %d", c.arg, lo[fieldArg], hi[fieldArg])
	case lo[fieldArg] != hi[fieldArg]:
		return mismatch("reduce ops differ across ranks: this rank asked for %v, others %v or %v",
			ReduceOp(c.arg), ReduceOp(lo[fieldArg]), ReduceOp(hi[fieldArg]))
	}
	return nil
}
