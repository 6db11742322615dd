// Package cpu holds Tessera's CPU kernels: loops over Go slices that
// know nothing of tensors.
//
// Every kernel takes its operands as a flat slice plus a Layout (shape,
// strides in elements, offset), writes into dst (always the first
// argument, as copy and gonum do) and reads the op to run as a small code
// from the op table in package tensor (UnaryOp, BinaryOp, ...). Package
// tensor checks shapes, dtypes and devices before calling a kernel, so
// kernels trust their arguments; a bad argument is a bug in tensor and
// panics with an index error.
//
// Elementwise kernels iterate like PyTorch's TensorIterator: operands are
// broadcast to the output shape with stride 0, dimensions that are
// contiguous in every operand are coalesced, and the innermost dimension
// runs as a tight loop (a plain slice loop when every operand is
// contiguous). Work above a size threshold is split across GOMAXPROCS
// goroutines by rows, or by runs of elements when there are few rows (a
// fully contiguous operand is a single row); a panic in a worker is
// re-raised in the calling goroutine.
package cpu
