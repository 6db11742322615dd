package ddp

import (
	"github.com/tessera-ml/tessera/distributed"
	"github.com/tessera-ml/tessera/tensor"
)

// MPI returns the Group of the processes of g, an mpirun launch (or this
// process alone) from distributed.Init, for New:
//
//	g, err := distributed.Init()
//	...
//	defer g.Close()
//	model := build(tensor.On(tensor.GPU(g.LocalRank())))
//	r, err := ddp.New(model, ddp.MPI(g), ddp.Options{})
//
// Its all-reduces are g's non-blocking ones (AllReduceAsync), queued on
// g's worker in the order the buckets complete; errors are g's, which
// also wrap ErrCollective. Package distributed loads MPI only under
// mpirun, so depending on it builds and runs without MPI.
func MPI(g *distributed.Group) Group { return mpiGroup{g} }

type mpiGroup struct{ g *distributed.Group }

func (m mpiGroup) Rank() int { return m.g.Rank() }
func (m mpiGroup) Size() int { return m.g.Size() }

func (m mpiGroup) AllReduce(t *tensor.Tensor, op ReduceOp) Work {
	dop := distributed.Sum
	switch op {
	case ReduceSum:
	case ReduceMax:
		dop = distributed.Max
	default:
		return doneWork{errorf("AllReduce", tensor.ErrArgument, "an unknown reduction %v", op)}
	}
	return m.g.AllReduceAsync(t, dop)
}

func (m mpiGroup) Broadcast(t *tensor.Tensor, root int) error { return m.g.Broadcast(t, root) }
