// Package distributed runs collectives on tensors across processes over
// Open MPI: the layer that data-parallel training is built on, with the
// semantics of torch.distributed and Horovod.
//
// # Launch
//
// Start N copies of a program with Open MPI's mpirun, on one machine or
// several (Open MPI 4.1: apt-get install libopenmpi-dev openmpi-bin):
//
//	mpirun -np 2 ./train                        # two ranks on this machine
//	mpirun -H a:4,b:4 -np 8 ./train             # four on each of two machines
//
// and make the group in each:
//
//	g, err := distributed.Init()
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer g.Close()
//	dev := tensor.GPU(g.LocalRank()) // one device per rank of a machine
//
// Init reads the launch from the variables mpirun sets
// (OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_LOCAL_RANK)
// and gives Rank, Size and LocalRank. Without a launcher the process is a
// world of one: Size is 1, and every collective is the identity (AllReduce
// and Broadcast leave the tensor as it is; AllGather and ReduceScatter
// return a copy), so one program runs alone or under mpirun unchanged. A
// world of one needs no MPI at all.
//
// MPI is loaded when Init finds a launch (dlopen of libmpi.so.40 through
// cgo), never linked: a build without cgo or a machine without Open MPI
// builds and runs every program alone, and under mpirun Init fails with
// an *Error wrapping ErrUnavailable that says what is missing and how to
// install it. Only this package touches MPI.
//
// # Collectives
//
//	AllReduce(t, op)      t ← op over ranks of t           (Sum, Mean, Max, Min)
//	Broadcast(t, root)    t ← root's t
//	AllGather(t)          [Size·n, d...] ← every rank's t [n, d...], in rank order
//	ReduceScatter(t, op)  [n, d...] ← part Rank of op over ranks of t [Size·n, d...]
//	Barrier()
//
// Each takes a tensor of dtype float32, float64 or int32 on any device,
// of the same shape and dtype on every rank. AllReduce and Broadcast
// write their result into t, in place and outside autograd, as
// torch.distributed does (a view is written through; an expanded view
// cannot be). AllGather and ReduceScatter return a new tensor like t.
//
// # Blocking and non-blocking
//
// Every collective but Barrier has an Async form that returns a *Work at
// once. The communication runs on the group's worker, one goroutine locked
// to the OS thread that initialized MPI (MPI_THREAD_FUNNELED), which takes
// collectives from a queue in the order they were issued; the caller goes
// on computing meanwhile, and Work.Wait writes the result. The tensor is
// read when the call is made and written when Wait returns, so an Async
// call takes a snapshot: changes to t before Wait are overwritten.
//
//	w := g.AllReduceAsync(bucket, distributed.Sum) // reduce one bucket of gradients ...
//	h := x.MatMul(weight)                         // ... while computing
//	if err := w.Wait(); err != nil {              // bucket now holds the sum
//		return err
//	}
//
// Wait makes tensor ops, so call it from the goroutine that owns the
// tensor (see tensor.Context): a Wait from another goroutine while the
// owner is inside a Scope of the default context returns the tensor
// package's ErrContext as an error.
//
// # Ordering
//
// Every rank must issue the same collectives in the same order, as in MPI
// and PyTorch: the k-th collective of one rank meets the k-th of every
// other. Collectives issued from several goroutines of one rank are
// queued in the order the calls happen, which the program must make the
// same on every rank (issue them from one goroutine). Close is the last
// collective of every rank.
//
// # GPU tensors
//
// WebGPU has no device-to-device path, so a GPU tensor is staged through
// host memory: read back when the call is made, reduced in host buffers
// by MPI, and written back (an upload and a copy) by Wait. The package's
// own host buffers (AllGather's, and Broadcast's on the receiving ranks)
// are reused by later calls of the same dtype and size; the readback is
// the tensor package's (Float32s and its kin). Issuing the next
// collective while the previous one communicates overlaps its readback
// with that communication.
//
// # Errors
//
// Collectives return an *Error (Op, Rank, Err, Detail); they do not panic.
// Before moving data, every collective all-reduces a small descriptor
// (which collective, dtype, element count, a hash of the shape, the
// reduce op or root, whether this rank's arguments are valid), so that
// ranks that disagree all return ErrMismatch, naming the op and this
// rank's shape, instead of hanging or reducing garbage. A rank whose own
// arguments are unusable (a nil or released tensor, bool, Mean of int32,
// a root out of range) returns ErrArgument, and the others ErrMismatch
// from the same call; the ranks stay in step for the next collective. MPI
// errors are ErrMPI with MPI's message.
//
// A rank that dies or exits without Close makes Open MPI's mpirun end the
// whole job, every rank included, as a failure naming that rank (about a
// second on one machine: TestMPIRankEnds); a rank that closes while
// others still issue collectives is told ErrMismatch, and so are they.
// A rank that simply stops issuing collectives, without exiting, leaves
// the others waiting: MPI has no timeout.
package distributed
