// Package autograd computes derivatives of tensor programs: gradients by
// reverse-mode automatic differentiation, and directional derivatives,
// Jacobians and Hessians by forward mode.
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
//
// # One rule table, two modes
//
// The derivative of an op at the point a node recorded is a linear map
// J (Elliott, "The Simple Essence of Automatic Differentiation"). Each
// op has one entry in the rule table that states J once; reverse mode
// applies its transpose Jᵀ to the gradient of the output, forward mode
// applies J to the tangents of the inputs. How an entry states J depends
// on the op:
//
//   - an elementwise op gives its local partials ∂out/∂inᵢ, and both
//     rules are derived from them: the gradient g·∂ᵢ (summed to the
//     input's shape) back, the tangent Σᵢ tᵢ·∂ᵢ forward;
//   - an op linear in its float inputs (views, Sum, CumSum, Cat, gathers
//     and scatters by a fixed index, casts, copies, Where for a fixed
//     condition) is its own derivative: forward mode applies the op to
//     the tangents, reverse mode its transpose;
//   - MatMul (bilinear), Softmax, LogSoftmax and the extrema (with ties)
//     give both rules;
//   - ScaledDotProductAttention gives both rules: reverse mode runs its
//     fused backward op (weights recomputed from the saved logsumexp),
//     and where the gradient itself is differentiated (CreateGraph, HVP)
//     and in forward mode the formulas run in differentiable ops over
//     the dense masked weights.
//
// TestRulesComplete fails when a differentiable op lacks an entry or an
// entry lacks either rule; every op's forward rule is checked against
// finite differences and against its reverse rule through
// ⟨u, J v⟩ = ⟨Jᵀ u, v⟩.
//
// # Forward mode
//
// JVP runs f once on inputs that stand for xs, with recording on, then
// visits the nodes f recorded in the order f computed them and applies
// each one's forward rule to the tangents of its inputs: J·v is
// composed in evaluation order, with no reverse pass. Tangents carry a
// leading batch dim, so Jacobian and Hessian push many basis vectors
// through one recorded computation at once. HVP and Hessian are forward
// over reverse: f's gradient comes from a reverse pass that records its
// own ops (CreateGraph), and the tangents are pushed through f and that
// reverse pass together, which is why every op a reverse rule uses has a
// forward rule too. VJP is reverse mode behind JVP's interface.
//
//	y, jv := autograd.JVP(f, []*tensor.Tensor{x}, []*tensor.Tensor{v})   // f(x), J·v
//	_, hv := autograd.HVP(loss, params, directions)                      // H·v
//
// When nothing outside the call requires grad, these functions free the
// graph f recorded before they return; otherwise their results keep
// their graphs, and the modes compose (reverse over forward, forward over
// forward).
package autograd
