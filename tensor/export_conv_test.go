package tensor

// SetUnfoldChunkBytes sets the bound on the columns of one Unfold of a
// convolution or pool (byBatch) and returns a function that restores it.
func SetUnfoldChunkBytes(n int) (restore func()) {
	old := unfoldChunkBytes
	unfoldChunkBytes = n
	return func() { unfoldChunkBytes = old }
}
