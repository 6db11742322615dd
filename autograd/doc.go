// Package autograd computes gradients of tensor programs by reverse-mode
// automatic differentiation.
//
// Package tensor records, for every tensor computed while grad mode is on
// from an input that requires grad, the op and inputs that produced it (a
// tensor.Node). Backward walks those records from a loss back to the
// leaves in reverse topological order, applying one derivative rule per
// op (rules*.go) and summing the gradients of tensors used more than
// once. The rules are written in tensor ops, so backward runs on whatever
// device the forward pass ran on, through the same dispatch table.
//
//	loss := x.MatMul(w).ReLU().Sum()
//	autograd.Backward(loss)   // fills w.Grad() (and x.Grad() if x requires grad)
//
// Backward frees what the forward pass saved as it goes; a second
// backward through the same graph is an error unless the first passed
// RetainGraph. CreateGraph records the backward pass itself, so gradients
// can be differentiated again. The rules compute in the loss's context
// (tensor.Context): with grad mode off there, unless CreateGraph asks
// for it on, so backward on one goroutine never changes what another
// goroutine records. Check compares the gradients Backward
// computes with central finite differences, and CheckSecondOrder does
// the same for the gradients of gradients.
package autograd
