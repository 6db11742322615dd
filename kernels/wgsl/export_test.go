package wgsl

// MatMulTiledConfig renders the tiled matmul template with any tile
// configuration (see mmTile), for tests beyond MatMulTiled's two.
func MatMulTiledConfig(tm, tn, ks, rm, rn int, out, a, b Layout, lim Limits) (Plan, error) {
	return matmulTiled(mmTile{TM: tm, TN: tn, KS: ks, RM: rm, RN: rn}, out, a, b, nil, lim, true)
}

// MatMulTiledScalar is MatMulTiledConfig with vec4 loads off, so tests
// run the scalar loads on layouts that allow vec4.
func MatMulTiledScalar(tm, tn, ks, rm, rn int, out, a, b Layout, lim Limits) (Plan, error) {
	return matmulTiled(mmTile{TM: tm, TN: tn, KS: ks, RM: rm, RN: rn}, out, a, b, nil, lim, false)
}
