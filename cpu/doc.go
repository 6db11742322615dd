// Package cpu holds Tessera's CPU kernels: loops over Go slices that
// know nothing of tensors.
//
// Every kernel takes its operands as a flat slice plus a Layout (shape,
// strides in elements, offset) and writes into dst (the first slice
// argument, as copy and gonum do; the functions a kernel applies come
// before it). Kernels know no ops: what to compute arrives as values
// from the op table in package tensor, a scalar function per element
// (Fn1, Fn2, Fn3; a Fold's Add and Merge for reductions; a comparison
// for ArgReduce) and, optionally, vector functions for contiguous runs
// (AddVec, ExpVecF32, SumFoldVec, ...) that keep the hottest loops free
// of a call per element. Package tensor checks shapes, dtypes and
// devices before calling a kernel, so kernels trust their arguments; a
// bad argument is a bug in tensor and panics with an index error.
//
// Elementwise kernels iterate like PyTorch's TensorIterator: operands are
// broadcast to the output shape with stride 0, dimensions that are
// contiguous in every operand are coalesced, and the innermost dimension
// runs as a tight loop (a plain slice loop when every operand is
// contiguous). Work above a size threshold is split across GOMAXPROCS
// goroutines by rows, or by runs of elements when there are few rows (a
// fully contiguous operand is a single row); a panic in a worker is
// re-raised in the calling goroutine.
//
// Every parallel kernel (GEMM blocks, elementwise runs, reductions,
// indexing) runs on one pool of persistent helper goroutines (runUnits,
// workers.go): the caller takes units itself and yields, never parks,
// while it waits for the helpers' units, and a helper spins briefly
// after its last unit before it sleeps, so that the kernels of a training
// step find it running.
package cpu
