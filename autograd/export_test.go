package autograd

// SetBasisBudget sets the tangent budget of Jacobian and Hessian's
// batched pushes (elements per tangent) and returns the old one.
func SetBasisBudget(n int) int {
	old := basisBudget
	basisBudget = n
	return old
}
