package tensor

// SetCPUFuseMin sets the least result size fused on the CPU (0: every
// size, so that small test tensors take the fused path) and returns a
// function restoring the previous one.
func SetCPUFuseMin(n int64) (restore func()) {
	was := cpuFuseMin.Swap(n)
	return func() { cpuFuseMin.Store(was) }
}
