package tensor

// Hooks for the bad-input tests of package tensor_test.

// SetCPUBudget sets the CPU budget to bytes (0: the environment's) and
// returns a function that restores the previous one.
func SetCPUBudget(bytes int64) (restore func()) {
	old := cpuMem.budget.Swap(bytes)
	return func() { cpuMem.budget.Store(old) }
}

// CPUReserved returns the bytes the CPU pool holds or has handed out.
func CPUReserved() int64 { return cpuMem.reserved.Load() }

// CPUBudgetFrom exposes cpuBudgetFrom.
var CPUBudgetFrom = cpuBudgetFrom
