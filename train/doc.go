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
package train
