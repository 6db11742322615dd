package wgsl

// MatMulTiledConfig renders the tiled matmul template with any tile
// configuration (see mmTile), for tests beyond MatMulTiled's two.
func MatMulTiledConfig(tm, tn, ks, rm, rn int, out, a, b Layout, lim Limits) (Kernel, error) {
	return matmulTiled(mmTile{TM: tm, TN: tn, KS: ks, RM: rm, RN: rn}, out, a, b, lim)
}
