package cpu

// Rows walks operands that share one shape row by row, as the
// elementwise kernels do, for kernels written outside this package (a
// fused expression interpreted per row): ls are the operands' layouts
// (broadcast beforehand with stride 0), work the cost in elements that
// decides whether to split across goroutines. newRow is called once per
// goroutine with each operand's innermost stride, so that each can own
// scratch buffers; the function it returns gets every row segment's
// starting offsets (one per operand) and length, and must only write
// where no other element writes.
func Rows(shape []int, ls []Layout, work int, newRow func(steps []int) func(offs []int, n int)) {
	it := newIter(shape, ls...)
	steps := make([]int, len(ls))
	for k := range ls {
		steps[k] = it.step(k)
	}
	it.runWorkers(work, func() func(offs []int, n int) { return newRow(steps) })
}
