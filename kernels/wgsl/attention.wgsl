{{/* attention_head: what the attention kernels share: the params, the
   invocation (one per row and head: t = i·heads + h, the element base
   of its D values), the segment [s, e) of row i from b_seg (2 i32 per
   row), and the chunk [c0, c1) of the span [lo, hi) this dispatch covers
   (params.k0, params.kc; spans longer than one dispatch's loop trips
   allow run in several). */}}
{{define "attention_head"}}{{.Struct}}
@group(1) @binding(0) var<uniform> params: Params;
{{end}}

{{define "attention_row"}}	let t = (wid.x + wid.y * nwg.x) * {{.WG}}u + lid;
	if (t >= params.n) {
		return;
	}
	let i = t / params.heads;
	let h = t % params.heads;
	let base = t * {{.D}}u;
	let s = u32(b_seg[params.soff + 2u * i]);
	let e = u32(b_seg[params.soff + 2u * i + 1u]);
{{end}}

{{/* attention_fwd: out[i] = Σ_j softmax_j(scale·q[i]·k[j]) v[j] over the
   keys j of chunk [s + k0, s + k0 + kc) of row i's keys ([s, e), or
   [s, i] when causal), as an online softmax: a running max m, sum l and
   accumulator acc, rescaled by exp(m_old - m_new) as the max grows. A
   later chunk resumes from the state the previous one left in out and
   lse (m = lse, l = 1, acc = out: the same softmax, normalised), so
   chunks compose exactly. Loops: D (load) + kc·(2D + 3) + D (store). */}}
{{define "attention_fwd"}}// attention forward: one invocation per (row, head), streaming over its keys.
{{template "attention_head" .}}
@group(0) @binding(0) var<storage, read_write> b_out: array<f32>;
@group(0) @binding(1) var<storage, read_write> b_lse: array<f32>;
@group(0) @binding(2) var<storage, read> b_q: array<f32>;
@group(0) @binding(3) var<storage, read> b_k: array<f32>;
@group(0) @binding(4) var<storage, read> b_v: array<f32>;
@group(0) @binding(5) var<storage, read> b_seg: array<i32>;

@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
{{template "attention_row" .}}
	let hi = select(e, i + 1u, params.causal != 0u);
	let lo = s + params.k0;
	if (params.k0 > 0u && lo >= hi) {
		return;
	}
	let end = min(hi, lo + params.kc);
	var q: array<f32, {{.D}}>;
	var acc: array<f32, {{.D}}>;
	var m = -3.0e38;
	var l = 0.0;
	// Loop: D iterations.
	for (var c = 0u; c < {{.D}}u; c++) {
		q[c] = params.scale * b_q[params.qoff + base + c];
		if (params.k0 > 0u) {
			acc[c] = b_out[params.ooff + base + c];
		} else {
			acc[c] = 0.0;
		}
	}
	if (params.k0 > 0u) {
		m = b_lse[params.loff + t];
		l = 1.0;
	}
	// Loop: kc iterations of two loops of D.
	for (var j = lo; j < end; j++) {
		let kb = (j * params.heads + h) * {{.D}}u;
		var sc = 0.0;
		for (var c = 0u; c < {{.D}}u; c++) {
			sc += q[c] * b_k[params.koff + kb + c];
		}
		let mn = max(m, sc);
		let corr = exp(m - mn);
		let p = exp(sc - mn);
		l = l * corr + p;
		for (var c = 0u; c < {{.D}}u; c++) {
			acc[c] = acc[c] * corr + p * b_v[params.voff + kb + c];
		}
		m = mn;
	}
	let inv = 1.0 / l;
	// Loop: D iterations.
	for (var c = 0u; c < {{.D}}u; c++) {
		b_out[params.ooff + base + c] = acc[c] * inv;
	}
	b_lse[params.loff + t] = m + log(l);
}
{{end}}

{{/* attention_delta: δ[t] = g[t]·out[t], the row term of the backward.
   Loop: D. */}}
{{define "attention_delta"}}// attention backward, δ = rowsum(g ⊙ out): one invocation per (row, head).
{{template "attention_head" .}}
@group(0) @binding(0) var<storage, read_write> b_delta: array<f32>;
@group(0) @binding(1) var<storage, read> b_g: array<f32>;
@group(0) @binding(2) var<storage, read> b_o: array<f32>;

@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
	let t = (wid.x + wid.y * nwg.x) * {{.WG}}u + lid;
	if (t >= params.n) {
		return;
	}
	let base = t * {{.D}}u;
	var acc = 0.0;
	// Loop: D iterations.
	for (var c = 0u; c < {{.D}}u; c++) {
		acc += b_g[params.goff + base + c] * b_o[params.ooff + base + c];
	}
	b_delta[t] = acc;
}
{{end}}

{{/* attention_grad: the two passes of the backward by recomputation.
   p = exp(scale·q[i]·k[j] - lse[i]), ds = p (g[i]·v[j] - δ[i]).
   Keys (.Keys false): invocation (i, h) sums over its keys j
   dq[i] = scale Σ_j ds k[j]. Keys true: invocation (j, h) sums over the
   queries i that see key j ([s, e), or [j, e) when causal)
   dk[j] = scale Σ_i ds q[i] and dv[j] = Σ_i p g[i]. A chunk after the
   first adds to what the earlier ones wrote. Loops: 2D + kc·(3D + 4). */}}
{{define "attention_grad"}}// attention backward, {{if .Keys}}dk and dv: one invocation per (key, head), over the queries that see it{{else}}dq: one invocation per (row, head), over its keys{{end}}.
{{template "attention_head" .}}
@group(0) @binding(0) var<storage, read_write> b_res: array<f32>;
@group(0) @binding(1) var<storage, read> b_q: array<f32>;
@group(0) @binding(2) var<storage, read> b_k: array<f32>;
@group(0) @binding(3) var<storage, read> b_v: array<f32>;
@group(0) @binding(4) var<storage, read> b_g: array<f32>;
@group(0) @binding(5) var<storage, read> b_lse: array<f32>;
@group(0) @binding(6) var<storage, read> b_delta: array<f32>;
@group(0) @binding(7) var<storage, read> b_seg: array<i32>;

@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
{{template "attention_row" .}}
{{- if .Keys}}
	let first = select(s, i, params.causal != 0u);
	let hi = e;
{{- else}}
	let first = s;
	let hi = select(e, i + 1u, params.causal != 0u);
{{- end}}
	let lo = first + params.k0;
	if (params.k0 > 0u && lo >= hi) {
		return;
	}
	let end = min(hi, lo + params.kc);
{{- if .Keys}}
	var kr: array<f32, {{.D}}>;
	var vr: array<f32, {{.D}}>;
	var ak: array<f32, {{.D}}>;
	var av: array<f32, {{.D}}>;
	// Loop: D iterations.
	for (var c = 0u; c < {{.D}}u; c++) {
		kr[c] = params.scale * b_k[params.koff + base + c];
		vr[c] = b_v[params.voff + base + c];
		ak[c] = 0.0;
		av[c] = 0.0;
	}
	// Loop: kc iterations of three loops of D.
	for (var r = lo; r < end; r++) {
		let rb = (r * params.heads + h) * {{.D}}u;
		let rt = r * params.heads + h;
		var sc = 0.0;
		for (var c = 0u; c < {{.D}}u; c++) {
			sc += kr[c] * b_q[params.qoff + rb + c];
		}
		var gv = 0.0;
		for (var c = 0u; c < {{.D}}u; c++) {
			gv += vr[c] * b_g[params.goff + rb + c];
		}
		let p = exp(sc - b_lse[params.loff + rt]);
		let ds = p * (gv - b_delta[rt]);
		for (var c = 0u; c < {{.D}}u; c++) {
			ak[c] += ds * b_q[params.qoff + rb + c];
			av[c] += p * b_g[params.goff + rb + c];
		}
	}
	// Loop: D iterations.
	for (var c = 0u; c < {{.D}}u; c++) {
		let kdst = params.dkoff + base + c;
		let vdst = params.dvoff + base + c;
		if (params.k0 > 0u) {
			b_res[kdst] += params.scale * ak[c];
			b_res[vdst] += av[c];
		} else {
			b_res[kdst] = params.scale * ak[c];
			b_res[vdst] = av[c];
		}
	}
{{- else}}
	var qr: array<f32, {{.D}}>;
	var gr: array<f32, {{.D}}>;
	var acc: array<f32, {{.D}}>;
	// Loop: D iterations.
	for (var c = 0u; c < {{.D}}u; c++) {
		qr[c] = params.scale * b_q[params.qoff + base + c];
		gr[c] = b_g[params.goff + base + c];
		acc[c] = 0.0;
	}
	let ls = b_lse[params.loff + t];
	let dl = b_delta[t];
	// Loop: kc iterations of three loops of D.
	for (var r = lo; r < end; r++) {
		let rb = (r * params.heads + h) * {{.D}}u;
		var sc = 0.0;
		for (var c = 0u; c < {{.D}}u; c++) {
			sc += qr[c] * b_k[params.koff + rb + c];
		}
		var gv = 0.0;
		for (var c = 0u; c < {{.D}}u; c++) {
			gv += gr[c] * b_v[params.voff + rb + c];
		}
		let ds = exp(sc - ls) * (gv - dl);
		for (var c = 0u; c < {{.D}}u; c++) {
			acc[c] += ds * b_k[params.koff + rb + c];
		}
	}
	// Loop: D iterations.
	for (var c = 0u; c < {{.D}}u; c++) {
		let dst = params.dqoff + base + c;
		if (params.k0 > 0u) {
			b_res[dst] += params.scale * acc[c];
		} else {
			b_res[dst] = params.scale * acc[c];
		}
	}
{{- end}}
}
{{end}}
