// Package data feeds training loops: datasets held in memory or read from
// files, and a Loader that cuts them into shuffled batches on a goroutine
// of its own.
//
// A Dataset is a number of examples, each made of the same fields (an
// input and a target, say) of fixed shape and dtype. InMemory holds
// columns of host values indexed along dimension 0 (FromTensors, MNIST,
// Delay); TextWindows and SeriesWindows cut examples out of one long
// sequence on demand (ReadCorpus, RampSeries, ReadCSV).
//
// A Loader yields each epoch's examples in batches, in an order that is a
// pure function of its seed and the epoch (Permutation), and makes the
// next batches ahead of the step on a goroutine, in a tensor.Context of
// its own, on the device its Config names. Next hands a batch over by
// adopting its tensors into the consumer's context, so the innermost
// Scope open there when Next is called releases them with the step:
//
//	l, err := data.NewLoader(train, data.Config{BatchSize: 64, Shuffle: true, Seed: 1, Device: dev})
//	...
//	defer l.Close()
//	for epoch := 0; epoch < epochs; epoch++ {
//		for b := range l.Batches() { // each iteration runs in a Scope
//			loss := nn.CrossEntropy(model.Forward(b.Tensors[0]), b.Tensors[1])
//			autograd.Backward(loss)
//			opt.Step()
//			opt.ZeroGrad()
//		}
//	}
//
// State and Restore export and restore the loader's position (seed,
// epoch, examples handed out) as plain values for a checkpoint: a
// restored loader continues with the very batches an uninterrupted one
// would have produced.
//
// Errors. Invalid arguments (a batch size below 1, an empty dataset,
// columns of different lengths) are *tensor.Error values wrapping
// tensor.ErrArgument, ErrShape, ErrDType or ErrDevice; constructors
// return them, methods on a Loader panic with them (tensor.Catch
// recovers). Problems with files (missing, unreadable, malformed, empty)
// are *FileError values naming the file and, for CSV, the line; they wrap
// the fs error, ErrFormat or ErrEmpty.
package data
