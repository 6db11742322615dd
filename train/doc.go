// Package train is the machinery that `tessera train <program>` shares
// between its programs: the common flags (--device, --steps or --epochs,
// --batch, --lr, --seed, --checkpoint, --checkpoint-every, --resume,
// --plot, --eval-every), the step loop with a progress bar (rate and
// ETA), periodic evaluation, a summary at the end (final metrics,
// steps/s, peak memory on the device), checkpoints that resume bit for
// bit on the CPU, a Ctrl-C that saves a checkpoint and stops cleanly, and
// training curves drawn with gonum.org/v1/plot.
//
// Checkpoints survive faults. Each save (at the end, on Ctrl-C, and
// every --checkpoint-every steps) replaces the file atomically
// (checkpoint.Save), so a process killed at any moment, even in the
// middle of a save, leaves the last complete checkpoint, which --resume
// continues with the very values of an uninterrupted run. A save that
// fails (a full disk, a file-size limit) stops the run with a *SaveError,
// leaving the file as it was and the task's state untouched; a damaged
// file given to --resume is an error naming the file and the damage
// (see package checkpoint), never a silent restart from an older one.
// TestKilledWhileSaving and TestFailedSaveKeepsState hold this.
//
// A program is a Program value: a name, a one-line summary, defaults for
// the common flags, and a Setup that registers the program's own flags
// and returns the function that builds its Task on the chosen device:
//
//	var MNISTMLP = &train.Program{
//		Name: "mnist-mlp", Summary: "an MLP on MNIST",
//		Defaults: train.Defaults{Epochs: 8, Batch: 128, LR: 1e-3},
//		Setup: func(fs *flag.FlagSet) train.Builder {
//			hidden := fs.Int("hidden", 512, "hidden units")
//			return func(r *train.Run) (train.Task, error) { return newMLP(r, *hidden) }
//		},
//	}
//
// A Task runs one optimizer step at a time (Step), evaluates (Evaluate)
// and names what a checkpoint holds (State): the model, the optimizer,
// its schedule, the data loader, the random generators, extra tensors
// such as a recurrent state, and a JSON value of the program's own. Each
// step must depend only on that state, so that a resumed run repeats an
// uninterrupted one exactly.
//
// # Data-parallel training
//
// Under Open MPI's mpirun every rank runs the same command, unchanged:
//
//	mpirun -np 2 tessera train mnist-mlp -steps 50 -batch 64
//
// trains as one process with -batch 128 would, up to the rounding of
// another summation order (which training can amplify: see
// TestMPITrainsAsOneProcess). -batch is each rank's.
// Main joins the world (distributed.Init, or Options.Group), wraps the
// task's model in a ddp.Replica, which starts every rank from rank 0's
// parameters, and the program deals its data by Run.Shard (PyTorch's
// DistributedSampler: batch i of all the ranks together is batch i of
// one process with batch World·b) and steps with Run.Backward, which
// leaves every rank the mean gradient, so the replicas stay bitwise
// equal. The value of each step is the ranks' mean; the ranks agree
// before each step whether to stop (Ctrl-C, -max-time), so all stop
// after the same one. Rank 0 alone prints, saves checkpoints and draws
// the curves; the summary gives the world size and the examples per
// second of all the ranks. Programs set Program.Parallel when they
// shard and step so (mnist-mlp, lstm, gpt, and mnist-cnn, whose batch
// norms see each rank's part alone); others, and worlds the flags
// cannot serve (more ranks than examples, a -batch above a rank's share
// of the data), are refused with one line.
//
// The devices of one process train the same way, one rank each:
//
//	tessera train mnist-mlp -steps 50 -batch 64 -device gpu:0,gpu:1
//
// runs the ranks on goroutines of this process (ddp.RunLocal, the
// gradients meeting in host memory, since WebGPU has no path between
// devices), each with a Run of its own: its device, its tensor.Context
// and its default generator (Run.Context, Run.Generator). A program
// that trains data-parallel makes its tensors, Scopes and NoGrads there
// (Run.TensorOptions, Run.Scope, Run.NoGrad, data.Config.Context).
// The list names GPUs, each once, of one kind of adapter
// (TESSERA_LOGICAL_GPUS=2 offers each adapter as two, which is how CI
// runs two ranks on lavapipe), or the CPU, any number of times (ranks
// that share its cores: for checking, no faster); the mean gradient is
// the same bits on every rank whatever the devices, but the CPU's and a
// GPU's optimizer steps round differently, so a list mixing them is
// refused rather than left to drift apart. A rank that fails ends the
// others at once (Main's error names it and its device); one that does
// not reach a collective within 5 minutes of the others ends them too.
// -device lists and mpirun exclude each other.
//
// A checkpoint holds rank 0's state and the world size it was saved at,
// and resumes at any other at the same place: the same step, and the
// same epoch with the same number of its examples handed out to the
// world (in the epoch's order), so that a run of 2 ranks of batch 64
// resumed alone with batch 128 goes on with the examples the two would
// have seen. The new ranks must share that number evenly (a world of one
// always can); else -resume is refused with one line. The end of an
// epoch is its end at any world size.
package train
