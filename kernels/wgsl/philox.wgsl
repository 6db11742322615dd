{{define "philox"}}// philox ({{.Dist}}): the stream of cpu.RandomWords / Uniform / Normal.
// Invocation b computes block offset + b = Philox4x32-10({lo, hi, 0, 0},
// {seed lo, seed hi}) (64-bit counter as two u32 with carry) and writes
// elements 4b .. 4b+3 below n.
{{.Struct}}
@group(1) @binding(0) var<uniform> params: Params;
@group(0) @binding(0) var<storage, read_write> b_out: array<{{if eq .Dist "words"}}u32{{else}}f32{{end}}>;
{{.Prelude}}
// mulhilo returns the 64-bit product a·b as (hi, lo).
fn mulhilo(a: u32, b: u32) -> vec2<u32> {
	let a0 = a & 0xffffu;
	let a1 = a >> 16u;
	let b0 = b & 0xffffu;
	let b1 = b >> 16u;
	let p00 = a0 * b0;
	let p01 = a0 * b1;
	let p10 = a1 * b0;
	let p11 = a1 * b1;
	let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
	let hi = p11 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u);
	return vec2<u32>(hi, a * b);
}

fn philox(ctr: vec4<u32>, key: vec2<u32>) -> vec4<u32> {
	var c = ctr;
	var k = key;
	// Loop: 10 rounds.
	for (var r = 0u; r < 10u; r++) {
		if (r > 0u) {
			k = k + vec2<u32>(0x9E3779B9u, 0xBB67AE85u);
		}
		let p0 = mulhilo(0xD2511F53u, c.x);
		let p1 = mulhilo(0xCD9E8D57u, c.z);
		c = vec4<u32>(p1.x ^ c.y ^ k.x, p1.y, p0.x ^ c.w ^ k.y, p0.y);
	}
	return c;
}
{{- if eq .Dist "uniform"}}

// uniform maps a word to lo + span·u with u = (w >> 8)·2^-24 (exact), kept
// below hi.
fn uniform(w: u32) -> f32 {
	let u = f32(w >> 8u) * 5.9604644775390625e-08;
	let v = params.lo + params.span * u;
	return select(v, params.below, v >= params.top && params.span > 0.0);
}
{{- end}}

@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
	let b = (wid.x + wid.y * nwg.x) * {{.WG}}u + lid;
	if (b >= params.blocks) {
		return;
	}
	let lo = params.off_lo + b;
	let hi = params.off_hi + select(0u, 1u, lo < b);
	let w = philox(vec4<u32>(lo, hi, 0u, 0u), vec2<u32>(params.seed_lo, params.seed_hi));
	let i = 4u * b;
	let at = params.out_off + i;
{{- if eq .Dist "normal"}}
	// Loop: 2 iterations.
	for (var j = 0u; j < 4u; j += 2u) {
		if (i + j < params.n) {
			// u1 = ((w >> 8) + 1)·2^-24 in (0, 1]; ln u1 = log1p(-d) with
			// d = 1 - u1, exact in f32.
			let d = f32(0xffffffu - (w[j] >> 8u)) * 5.9604644775390625e-08;
			let u2 = f32(w[j + 1u] >> 8u) * 5.9604644775390625e-08;
			let r = sqrt(max(-2.0 * log1p(-d), 0.0));
			let th = 6.283185307179586 * u2;
			b_out[at + j] = params.mean + params.sdev * r * cos(th);
			if (i + j + 1u < params.n) {
				b_out[at + j + 1u] = params.mean + params.sdev * r * sin(th);
			}
		}
	}
{{- else}}
	// Loop: 4 iterations.
	for (var j = 0u; j < 4u; j++) {
		if (i + j < params.n) {
			b_out[at + j] = {{if eq .Dist "words"}}w[j]{{else}}uniform(w[j]){{end}};
		}
	}
{{- end}}
}
{{end}}
