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
// path. Ranks in several processes or machines use an adapter over
// package distributed (MPI); this package does not depend on MPI.
//
// A training loop of one in-process rank:
//
//	groups := ddp.NewLocalGroups(2, 0)
//	for rank, dev := range []tensor.Device{tensor.GPU(0), tensor.CPU} {
//		go func() {
//			c := tensor.NewContext()
//			model := nn.NewMLP([]int{784, 128, 10}, (*tensor.Tensor).ReLU, tensor.On(dev), tensor.In(c))
//			r, err := ddp.New(model, groups[rank], ddp.Options{})
//			...
//			opt := optim.NewSGD(nn.Parameters(model), optim.LR(0.1))
//			for step := range steps {
//				c.Scope(func() {
//					x, y := batch(rank, step) // made with tensor.In(c)
//					err = r.Backward(nn.CrossEntropy(model.Forward(x), y))
//					opt.Step()
//					opt.ZeroGrad()
//				})
//			}
//		}()
//	}
//
// New broadcasts rank 0's parameters and buffers to the other ranks and
// checks first that every rank has the same parameter and buffer names,
// shapes, dtypes and requires-grad flags: a mismatch is an *Error
// wrapping ErrMismatch that names the rank and the parameter.
//
// Buckets. The gradients of the parameters that require grad are laid
// out in buckets of at most Options.BucketBytes (25 MiB by default), one
// dtype and device each, filled in the reverse order of the parameters,
// the order in which backward produces their gradients. A gradient hook
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
// A world of one communicates nothing: Backward is autograd.Backward.
package ddp
