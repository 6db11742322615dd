// Package nested provides ragged tensors: a Nested is a batch of
// components that agree in every dimension but the first, such as
// sentences of different lengths, each a [length, features] tensor,
// without padding them to a rectangle.
//
// Layout. The components are stored packed in one tensor, Values, of
// shape [sum of lengths, rest...], with host-side offsets (the jagged
// layout of PyTorch's nested tensors):
//
//	components  [a0 a1 a2] [b0] [c0 c1]        lengths 3 1 2, rest [d]
//	Values      [a0 a1 a2 b0 c0 c1]            shape [6, d]
//	Offsets     0 3 4 6                         component i: rows Offsets[i]..Offsets[i+1]
//
// Values lives on one device, the CPU or a GPU; the offsets never leave
// the host. An op on a Nested is a fixed chain of tensor ops on Values,
// so it runs the same number of kernels whatever the number of
// components, and autograd differentiates it through the tensor ops'
// own rules, on either device:
//
//   - ops that act on each row alone (elementwise ops, broadcasting
//     against dense tensors of the component shape, MatMul with a dense
//     weight, LayerNorm over the trailing dimensions, Embedding, softmax
//     over a non-ragged dim, reductions over non-ragged dims) are the
//     tensor op on Values (Map, Zip, ZipDense);
//   - reductions over the ragged dimension are segment reductions: Sum
//     adds the rows into [components, rest...] by tensor IndexAdd with the
//     component id of every row; Mean divides by the lengths; Max takes
//     them into -Inf by tensor IndexAmax (torch's index_reduce "amax");
//     Softmax and LogSoftmax along the ragged dimension compose these;
//     the component ids are built and uploaded once per device for a
//     Nested and the Nesteds its ops derive (they share its offsets),
//     safely from several goroutines, and kept until those are garbage;
//   - moving rows between layouts (FromPadded, ToPadded, Cat along the
//     ragged dimension) is one tensor IndexSelect with a row map computed
//     on the host and uploaded.
//
// Nothing is padded except by ToPadded itself. On the GPU the scatter
// kernels behind IndexAdd and IndexAmax scan at most 65535 rows per
// kernel (wgsl.DefaultMaxLoopTrips), so beyond that many packed rows the
// kernel count grows with the total length, never with the number of
// components; their cost is (components × rest) × rows, which suits
// batches of modest size (a segment-reduce kernel that scans only each
// component's rows would make it rows × rest).
//
// Recurrent layers walk a ragged batch step-major: nn.PackNested turns a
// Nested of sequences into an nn.PackedSequence (PyTorch's layout, batch
// sizes per step) for their ForwardPacked, and PackedSequence.Nested
// turns the outputs back, one gather each way.
//
// Errors. Misuse panics with a *tensor.Error whose Op is "nested.Name"
// (or the tensor op's own error, from the tensor op that met it), as in
// package tensor; tensor.Catch recovers it.
package nested
