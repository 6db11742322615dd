{{define "line_common"}}
{{- .Struct}}
@group(1) @binding(0) var<uniform> params: Params;
@group(0) @binding(0) var<storage, read_write> b_out: array<{{.T}}>;
{{- if not .InPlace}}
@group(0) @binding(1) var<storage, read> b_x: array<{{.T}}>;
{{- end}}
{{.Prelude}}
fn xat(r: u32, xb: u32) -> {{.T}} {
	return {{if .InPlace}}b_out{{else}}b_x{{end}}[xb + r * params.xstride];
}
{{end}}

{{/* softmax_fns: the functions the softmax passes share. */}}
{{define "softmax_fns"}}// maxc is max with NaN winning; comparisons never see a NaN.
fn maxc(a: f32, v: f32) -> f32 {
	if (isnan_(a) || isnan_(v)) {
		return select(v, a, isnan_(a));
	}
	return select(a, v, v > a);
}

fn value(v: f32, m: f32, ls: f32, inv: f32, bad: bool) -> f32 {
{{- if .Log}}
	let y = (v - m) - ls;
{{- else}}
	let y = exp(v - m) * inv;
{{- end}}
	return select(y, bitcast<f32>(0x7fc00000u), bad);
}
{{- end}}

{{define "softmax"}}// {{if .Log}}log_softmax{{else}}softmax{{end}} ({{.Mode}}) along lines of params.len elements, in
// three passes: m = max (NaN wins), s = Σ exp(x - m), then
// {{if .Log}}(x - m) - log(s){{else}}exp(x - m) / s{{end}}. A line whose max is not finite (NaN, +inf, or
// all -inf) is NaN, as in torch.
{{template "line_common" .}}
{{template "softmax_fns" .}}
{{- if eq .Mode "serial"}}

// One invocation per line.
{{template "row_invocation" (dict "WG" .WG "Walk" .KeptWalk)}}
	// Three loops: 3·(params.len + 1) ≤ Limits.MaxLoopTrips trips.
	var m = bitcast<f32>(0xff800000u);
	// Loop: params.len iterations.
	for (var r = 0u; r < params.len; r++) {
		m = maxc(m, xat(r, xb));
	}
	var s = 0.0;
	// Loop: params.len iterations.
	for (var r = 0u; r < params.len; r++) {
		s += exp(xat(r, xb) - m);
	}
	let bad = isnan_(m) || isinf_(m);
	let ls = log1p(s - 1.0); // s ≥ 1: s - 1 is exact near 1, where log is poor
	let inv = 1.0 / s;
	// Loop: params.len iterations.
	for (var r = 0u; r < params.len; r++) {
		b_out[ob + r * params.ostride] = value(xat(r, xb), m, ls, inv, bad);
	}
}
{{- else}}

// One workgroup per line; both reductions are trees in workgroup memory.
var<workgroup> sh: array<f32, {{.WG}}>;

{{template "row_workgroup" (dict "WG" .WG "Walk" .KeptWalk)}}
	// Three loops of ⌈params.len / {{.WG}}⌉ iterations and two trees
	// (softmaxGroupTrips ≤ Limits.MaxLoopTrips).
	var m = bitcast<f32>(0xff800000u);
	// Loop: ⌈params.len / {{.WG}}⌉ iterations.
	for (var r = lid; r < params.len; r += {{.WG}}u) {
		m = maxc(m, xat(r, xb));
	}
{{template "wg_tree" (dict "WG" .WG "Val" "m" "Combine" "maxc")}}
	let mx = sh[0];
	workgroupBarrier();
	var s = 0.0;
	// Loop: ⌈params.len / {{.WG}}⌉ iterations.
	for (var r = lid; r < params.len; r += {{.WG}}u) {
		s += exp(xat(r, xb) - mx);
	}
{{template "wg_tree" (dict "WG" .WG "Val" "s" "Combine" "+")}}
	let tot = sh[0];
	let bad = isnan_(mx) || isinf_(mx);
	let ls = log1p(tot - 1.0);
	let inv = 1.0 / tot;
	// Loop: ⌈params.len / {{.WG}}⌉ iterations.
	for (var r = lid; r < params.len; r += {{.WG}}u) {
		b_out[ob + r * params.ostride] = value(xat(r, xb), mx, ls, inv, bad);
	}
}
{{- end}}
{{end}}

{{define "softmax_seg"}}// {{if .Log}}log_softmax{{else}}softmax{{end}} over segments, pass {{.Stage}} of 3: one workgroup per
// (line, segment of params.seglen elements). Pass 1 (a max reduction)
// wrote the segments' maxes to part[o·nseg + s]; the line's max m is theirs.
{{- if eq .Stage 2}}
// This pass writes the segment's Σ exp(x - m) to part[params.part + o·nseg + s].
{{- else}}
// This pass writes {{if .Log}}(x - m) - log(t){{else}}exp(x - m) / t{{end}}, t the sum of the segments' sums
// in segment order. A line whose max is not finite is NaN, as in torch.
{{- end}}
{{.Struct}}
@group(1) @binding(0) var<uniform> params: Params;
{{- if eq .Stage 2}}
@group(0) @binding(0) var<storage, read_write> b_part: array<f32>;
@group(0) @binding(1) var<storage, read> b_x: array<f32>;
{{- else}}
@group(0) @binding(0) var<storage, read_write> b_out: array<f32>;
{{- if not .InPlace}}
@group(0) @binding(1) var<storage, read> b_x: array<f32>;
{{- end}}
@group(0) @binding({{if .InPlace}}1{{else}}2{{end}}) var<storage, read> b_part: array<f32>;
{{- end}}
{{.Prelude}}
fn xat(r: u32, xb: u32) -> f32 {
	return {{if and .InPlace (ne .Stage 2)}}b_out{{else}}b_x{{end}}[xb + r * params.xstride];
}

{{template "softmax_fns" .}}
var<workgroup> sh: array<f32, {{.WG}}>;

{{template "row_workgroup" (dict "WG" .WG "Walk" .KeptWalk "Segs" true)}}
	let first = o * params.nseg;
	var m = bitcast<f32>(0xff800000u);
	// Loop: params.nseg iterations.
	for (var i = 0u; i < params.nseg; i++) {
		m = maxc(m, b_part[first + i]);
	}
	let start = s * params.seglen;
	let end = min(start + params.seglen, params.len);
{{- if eq .Stage 2}}
	var acc = 0.0;
	// Loop: ⌈params.seglen / {{.WG}}⌉ iterations, then the tree.
	for (var r = start + lid; r < end; r += {{.WG}}u) {
		acc += exp(xat(r, xb) - m);
	}
{{template "wg_tree" (dict "WG" .WG "Val" "acc" "Combine" "+")}}
	if (lid == 0u) {
		b_part[params.part + g] = sh[0];
	}
{{- else}}
	var t = 0.0;
	// Loop: params.nseg iterations.
	for (var i = 0u; i < params.nseg; i++) {
		t += b_part[params.part + first + i];
	}
	let bad = isnan_(m) || isinf_(m);
	let ls = log1p(t - 1.0);
	let inv = 1.0 / t;
	// Loop: ⌈params.seglen / {{.WG}}⌉ iterations.
	for (var r = start + lid; r < end; r += {{.WG}}u) {
		b_out[ob + r * params.ostride] = value(xat(r, xb), m, ls, inv, bad);
	}
{{- end}}
}
{{end}}

{{define "cumsum"}}// cumsum ({{.T}}): out[..., i, ...] = x[..., 0, ...] + ... + x[..., i, ...], one
// invocation per (chunk of params.seglen elements, line), accumulating in
// {{.T}} (i32 wraps){{if .Chunked}}, each chunk starting from its offset, the sum of
// the chunks before it (passes 1 and 2 wrote it to part[g]){{else}}; one chunk: whole lines{{end}}.
{{template "line_common" .}}
{{- if .Chunked}}
@group(0) @binding({{if .InPlace}}1{{else}}2{{end}}) var<storage, read> b_part: array<{{.T}}>;
{{- end}}
{{template "row_invocation" (dict "WG" .WG "Walk" .KeptWalk "Segs" true)}}
	let start = s * params.seglen;
	let end = min(start + params.seglen, params.len);
	var acc: {{.T}} = {{if .Chunked}}b_part[g]{{else}}{{.T}}(0){{end}};
	// Loop: params.seglen iterations (≤ Limits.MaxLoopTrips - 1).
	for (var r = start; r < end; r++) {
		acc += xat(r, xb);
		b_out[ob + r * params.ostride] = acc;
	}
}
{{end}}

{{define "cumsum_offsets"}}// cumsum ({{.T}}), pass 2 of 3: per line o, the exclusive scan in place of
// its chunks' totals part[c·nout + o], which pass 1 wrote: each chunk's
// offset for pass 3.
{{.Struct}}
@group(1) @binding(0) var<uniform> params: Params;
@group(0) @binding(0) var<storage, read_write> b_part: array<{{.T}}>;

@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
	let o = (wid.x + wid.y * nwg.x) * {{.WG}}u + lid;
	if (o >= params.nout) {
		return;
	}
	var acc: {{.T}} = {{.T}}(0);
	// Loop: params.nseg iterations (≤ Limits.MaxLoopTrips - 1).
	for (var c = 0u; c < params.nseg; c++) {
		let at = c * params.nout + o;
		let t = b_part[at];
		b_part[at] = acc;
		acc += t;
	}
}
{{end}}
