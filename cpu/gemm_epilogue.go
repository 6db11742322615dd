package cpu

import "fmt"

// An Epilogue is a bias, and perhaps a ReLU after it, that
// MatMulEpilogue applies to a float32 product as the kernels store it,
// from registers: Bias[j] added to column j, then, when ReLU is set,
// max(v, 0). Each step rounds as the elementwise op does (Add, then
// ReLU), so the result is bitwise the product followed by those ops. The
// zero Epilogue is none; a ReLU needs a bias.
type Epilogue struct {
	Bias []float32
	ReLU bool
}

// at returns e for the block of the product whose first column is j, or
// none when e is nil or when the block's values are not final yet (last
// is false: a K step follows).
func (e *Epilogue) at(j int, last bool) Epilogue {
	if e == nil || !last {
		return Epilogue{}
	}
	return Epilogue{Bias: e.Bias[j:], ReLU: e.ReLU}
}

// check panics unless e's bias covers a product of n columns.
func (e *Epilogue) check(n int) {
	if len(e.Bias) < n {
		panic(fmt.Sprintf("cpu: MatMulEpilogue: %d bias values for %d columns", len(e.Bias), n))
	}
}
