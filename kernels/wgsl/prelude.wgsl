{{/*
prelude.wgsl: helper functions for elementwise expressions. A kernel
includes a helper only when its expression names it (see prelude.go).
NaN tests are bit tests, and no comparison meets a NaN it matters for:
with fast-math, lavapipe folds x != x to false and may answer an
unordered compare either way.
*/}}

{{define "isnan_"}}
fn isnan_(v: f32) -> bool {
	return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u;
}
{{end}}

{{define "isinf_"}}
fn isinf_(v: f32) -> bool {
	return (bitcast<u32>(v) & 0x7fffffffu) == 0x7f800000u;
}
{{end}}

{{define "log1p"}}
// log1p(x) = log(1 + x), accurate near 0: 2·atanh(s) with s = x/(2+x)
// (|s| ≤ 0.1716) as an odd series where 1 + x would round, else log.
fn log1p(x: f32) -> f32 {
	if (x > -0.2929 && x < 0.4142) {
		let s = x / (2.0 + x);
		let t = s * s;
		return 2.0 * s * (1.0 + t * (0.33333333333 + t * (0.2 + t * (0.14285714286 + t * (0.11111111111 + t * (0.09090909091 + t * 0.07692307692))))));
	}
	return log(1.0 + x);
}
{{end}}

{{define "log_"}}
// log_(x) = log(x) accurate near 1, where lavapipe's log is off by about
// 1.5e-7 absolutely (relative errors up to 1e-3): log1p(x - 1) there, x - 1
// being exact.
fn log_(x: f32) -> f32 {
	if (x > 0.7 && x < 1.4) {
		return log1p(x - 1.0);
	}
	return log(x);
}
{{end}}

{{define "tanh_"}}
// tanh_(x) = tanh(x) with a small relative error near 0, where lavapipe's
// tanh is off by about 1.4e-7 absolutely: for |x| < 0.625 the odd
// polynomial of Cephes' tanhf (relative error below 1e-7), else tanh.
fn tanh_(x: f32) -> f32 {
	if (abs(x) < 0.625) {
		let z = x * x;
		return ((((-5.70498872745e-3 * z + 2.06390887954e-2) * z - 5.37397155531e-2) * z + 1.33314422036e-1) * z - 3.33332819422e-1) * z * x + x;
	}
	return tanh(x);
}
{{end}}

{{define "erf_"}}
// erf_(x): the Taylor series of erf for |x| < 0.5, else 1 - erfc(|x|) with
// the Chebyshev fit of Numerical Recipes' erfcc (fractional error below
// 1.2e-7). Max absolute error against math.Erf is about 2e-7 in f32.
fn erf_(x: f32) -> f32 {
	let z = abs(x);
	if (z < 0.5) {
		let t = x * x;
		return x * (1.1283791670955126 + t * (-0.37612638903183754 + t * (0.11283791670955126 + t * (-0.026866170645131252 + t * (0.005223977625442188 + t * (-0.0008548327023450853 + t * 0.00012055332981789664))))));
	}
	let t = 1.0 / (1.0 + 0.5 * z);
	let r = t * exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))));
	let e = 1.0 - r;
	return select(e, -e, x < 0.0);
}
{{end}}

{{define "pow_f32"}}
// pow_(x, y) with C's (and torch's) special cases: pow(x, 0) = pow(1, y) = 1
// even for NaN, a negative base with an integral exponent gives the sign
// of the parity, with a non-integral one NaN. Integral |y| ≤ 64 multiply
// (x*x is correctly rounded), |y| = 0.5 is a square root; others use
// exp2(y·log2|x|), a few ulps off.
fn pow_(x: f32, y: f32) -> f32 {
	let xn = isnan_(x);
	let yn = isnan_(y);
	if ((!yn && y == 0.0) || (!xn && x == 1.0)) {
		return 1.0;
	}
	if (xn || yn) {
		return bitcast<f32>(0x7fc00000u);
	}
	let ay = abs(y);
	let yi = floor(y) == y;
	if (yi && ay <= 64.0) {
		var n = u32(ay);
		var b = x;
		var r = 1.0;
		// Loop: 7 iterations at most (n ≤ 64).
		loop {
			if ((n & 1u) != 0u) {
				r = r * b;
			}
			n = n >> 1u;
			if (n == 0u) {
				break;
			}
			b = b * b;
		}
		return select(r, 1.0 / r, y < 0.0);
	}
	let ax = abs(x);
	if (isinf_(y) && ax == 1.0) {
		return 1.0;
	}
	if (x < 0.0 && !yi) {
		if (isinf_(x)) {
			return select(0.0, bitcast<f32>(0x7f800000u), y > 0.0);
		}
		return bitcast<f32>(0x7fc00000u);
	}
	if (ax == 0.0) {
		// exp2(y·log2(0)) is folded to 0 on lavapipe even for y < 0.
		return select(0.0, bitcast<f32>(0x7f800000u), y < 0.0);
	}
	if (ay == 0.5) {
		// sqrt is correctly rounded where exp2/log2 are not; ax keeps
		// pow(-0, 0.5) = +0 and the x < 0 cases returned above.
		return select(sqrt(ax), 1.0 / sqrt(ax), y < 0.0);
	}
	let r = exp2(y * log2(ax));
	if (x < 0.0 && ay < 16777216.0 && (u32(ay) & 1u) == 1u) {
		return -r;
	}
	return r;
}
{{end}}

{{define "pow_i32"}}
// pow_(x, y) for i32: wrapping multiplication for y ≥ 0; for y < 0 what
// the CPU's int32(math.Pow(x, y)) gives: 1 for x = 1, ±1 for x = -1,
// -2^31 for x = 0, else 0.
fn pow_(x: i32, y: i32) -> i32 {
	if (y < 0) {
		if (x == 1) {
			return 1;
		}
		if (x == -1) {
			return select(-1, 1, (y & 1) == 0);
		}
		if (x == 0) {
			return i32(-2147483647 - 1);
		}
		return 0;
	}
	var n = u32(y);
	var b = x;
	var r = 1;
	// Loop: 32 iterations at most (bits of n), and the exit.
	loop {
		if (n == 0u) {
			break;
		}
		if ((n & 1u) != 0u) {
			r = r * b;
		}
		n = n >> 1u;
		b = b * b;
	}
	return r;
}
{{end}}
