// Package ddp trains one model data-parallel across ranks, as PyTorch's
// DistributedDataParallel does: every rank holds a replica of the model
// on its own device, computes the loss of its own part of each batch,
// and Replica.Backward sets every parameter's Grad to the mean of the
// ranks' gradients, so that the same optimizer step on every rank keeps
// the replicas bitwise equal. N ranks with batch b each then train as
// one process with batch N·b and a mean loss (data.Config.Shard deals
// the examples that way).
//
// The ranks talk through a Group, a small interface of collectives on
// tensors. NewLocalGroups makes the ranks of one process: goroutines,
// each with its own device (the CPU, a GPU) and its own tensor.Context,
// reducing through host memory, since WebGPU gives no device-to-device
// path; RunLocal starts them. MPI adapts a distributed.Group, the
// processes of an mpirun launch on one machine or several; package
// distributed loads MPI only under mpirun, so nothing here needs MPI to
// build or run.
//
// The devices of one process, one rank each:
//
//	err := ddp.RunLocal([]tensor.Device{tensor.GPU(0), tensor.GPU(1)}, 0,
//		func(rank int, dev tensor.Device, g ddp.Group, c *tensor.Context) error {
//			model := nn.NewMLP([]int{784, 128, 10}, (*tensor.Tensor).ReLU, tensor.On(dev), tensor.In(c))
//			r, err := ddp.New(model, g, ddp.Options{})
//			if err != nil {
//				return err
//			}
//			opt := optim.NewSGD(nn.Parameters(model), optim.LR(0.1))
//			for step := range steps {
//				c.Scope(func() {
//					x, y := batch(rank, step, dev, c) // its shard: data.Config.Shard
//					err = r.Backward(nn.CrossEntropy(model.Forward(x), y))
//					opt.Step()
//					opt.ZeroGrad()
//				})
//				if err != nil {
//					return err
//				}
//			}
//			return nil
//		})
//
// (on a machine with one adapter, TESSERA_LOGICAL_GPUS=2 makes gpu:0 and
// gpu:1 two devices of it), and under mpirun -np N, one process per rank, the same loop with
// g := ddp.MPI(group) from distributed.Init and dev :=
// tensor.GPU(group.LocalRank()).
//
// New broadcasts rank 0's parameters and buffers to the other ranks and
// checks first that every rank has the same parameter and buffer names,
// shapes, dtypes and requires-grad flags: a mismatch is an *Error
// wrapping ErrMismatch that names the rank and the parameter.
//
// Buckets. The gradients of the parameters that require grad are laid
// out in buckets of at most Options.BucketBytes (25 MiB by default), one
// dtype and device each, filled in the reverse order of the parameters,
// and after the first synchronised Backward filled again in the order
// its gradients arrived on rank 0, as PyTorch's DDP does: the engine
// need not produce them in reverse order (it reaches the biases of a
// stack of linear layers last). A gradient hook
// on each parameter copies its gradient into its bucket; when a bucket is
// complete and every bucket before it has started, its all-reduce starts
// (staged through host memory for a GPU), while backward goes on with
// the earlier layers. The ranks start the all-reduces in the same order,
// as MPI requires. Backward then waits for all of them and sets each
// parameter's Grad to the bucket's sum divided by the number of ranks,
// computed on the host so that ranks on different devices get the same
// bits. The optimizer runs after Backward returns.
//
// Gradient accumulation. Inside NoSync, backward passes accumulate each
// rank's own gradients and communicate nothing; the next Backward
// outside it reduces the accumulated gradient plus its own, so k
// micro-batches under NoSync and one synchronised give the gradient of
// their union.
//
// Buffers (batch norm's running statistics) are broadcast from rank 0
// after each synchronised Backward, so that every rank holds rank 0's
// (Options.LocalBuffers turns it off; SyncBuffers does it on demand).
// Each rank's batch norm still normalises by its own batch's statistics:
// SyncBatchNorm is not provided.
//
// Unused parameters. A parameter that requires grad but receives no
// gradient in a synchronised Backward would hold its bucket back. By
// default that is an *Error wrapping ErrUnusedParameter naming it,
// returned after the step's collectives have completed (with the
// parameter's gradient so far, or zeros), so that no rank waits forever.
// With Options.FindUnusedParameters, Backward first walks the loss's
// graph and lets the parameters it does not reach contribute at once; a
// parameter no rank had a gradient for keeps its Grad (nil stays nil),
// which costs one more small all-reduce per step.
//
// Failures. Collectives that the ranks call differently are an error
// wrapping ErrCollective on every rank; in a LocalGroup a rank that does
// not join within the timeout is ErrTimeout naming it, and a rank that
// fails under RunLocal aborts the world (ErrAborted) so that no other
// rank waits for it.
//
// A world of one communicates nothing: Backward is autograd.Backward.
package ddp
