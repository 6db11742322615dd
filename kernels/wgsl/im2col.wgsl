{{define "im2col"}}// im2col: one invocation per element t of the contiguous output
// (N, C·KH·KW, OH·OW): row r = (c·KH + i)·KW + j of batch b, column
// l = oh·OW + ow, reads x[b, c, oh·SH - PH + i·DH, ow·SW - PW + j·DW], or
// params.pad where that falls outside x. No loops.
{{.Struct}}
@group(1) @binding(0) var<uniform> params: Params;
@group(0) @binding(0) var<storage, read_write> b_out: array<f32>;
@group(0) @binding(1) var<storage, read> b_x: array<f32>;

@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
	let t = (wid.x + wid.y * nwg.x) * {{.WG}}u + lid;
	if (t >= params.n) {
		return;
	}
	let l = t % params.l;
	let r = t / params.l;
	let j = r % params.kw;
	let i = (r / params.kw) % params.kh;
	let c = (r / (params.kw * params.kh)) % params.c;
	let b = r / (params.kw * params.kh * params.c);
	let h = i32((l / params.ow) * params.sh + i * params.dh) - i32(params.ph);
	let w = i32((l % params.ow) * params.sw + j * params.dw) - i32(params.pw);
	var v = params.pad;
	if (h >= 0 && u32(h) < params.h && w >= 0 && u32(w) < params.w) {
		v = b_x[params.xoff + b * params.xs0 + c * params.xs1 + u32(h) * params.xs2 + u32(w) * params.xs3];
	}
	b_out[params.ooff + t] = v;
}
{{end}}

{{define "col2im"}}// col2im: one invocation per element t = (b, c, h, w) of the contiguous
// output (N, C, H, W) sums, over kernel elements (i, j) in row-major
// order (the CPU's order, so results are bitwise equal), the column entry
// cols[b, (c·KH + i)·KW + j, oh·OW + ow] of the window position (oh, ow)
// that reads (h, w) through (i, j), if there is one.
{{.Struct}}
@group(1) @binding(0) var<uniform> params: Params;
@group(0) @binding(0) var<storage, read_write> b_out: array<f32>;
@group(0) @binding(1) var<storage, read> b_cols: array<f32>;

@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
	let t = (wid.x + wid.y * nwg.x) * {{.WG}}u + lid;
	if (t >= params.n) {
		return;
	}
	let w = t % params.w;
	let h = (t / params.w) % params.h;
	let c = (t / (params.w * params.h)) % params.c;
	let b = t / (params.w * params.h * params.c);
	let base = params.coff + b * params.cs0;
	var acc = 0.0;
	// Loop: KH·KW iterations (≤ Limits.MaxLoopTrips - 1).
	for (var r = 0u; r < params.kh * params.kw; r++) {
		let i = r / params.kw;
		let j = r % params.kw;
		let ph = i32(h + params.ph) - i32(i * params.dh);
		let pw = i32(w + params.pw) - i32(j * params.dw);
		if (ph < 0 || pw < 0) {
			continue;
		}
		let uh = u32(ph);
		let uw = u32(pw);
		if (uh % params.sh != 0u || uw % params.sw != 0u) {
			continue;
		}
		let oh = uh / params.sh;
		let ow = uw / params.sw;
		if (oh >= params.oh || ow >= params.ow) {
			continue;
		}
		acc += b_cols[base + (c * params.kh * params.kw + r) * params.cs1 + (oh * params.ow + ow) * params.cs2];
	}
	b_out[params.ooff + t] = acc;
}
{{end}}
