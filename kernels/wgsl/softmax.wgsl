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

{{define "softmax"}}// {{if .Log}}log_softmax{{else}}softmax{{end}} ({{.Mode}}) along lines of params.len elements, in
// three passes: m = max (NaN wins), s = Σ exp(x - m), then
// {{if .Log}}(x - m) - log(s){{else}}exp(x - m) / s{{end}}. A line whose max is not finite (NaN, +inf, or
// all -inf) is NaN, as in torch.
{{template "line_common" .}}
// maxc is max with NaN winning; comparisons never see a NaN.
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
{{- if eq .Mode "serial"}}

// One invocation per line.
{{template "row_invocation" (dict "WG" .WG "Walk" .KeptWalk)}}
	var m = bitcast<f32>(0xff800000u);
	for (var r = 0u; r < params.len; r++) {
		m = maxc(m, xat(r, xb));
	}
	var s = 0.0;
	for (var r = 0u; r < params.len; r++) {
		s += exp(xat(r, xb) - m);
	}
	let bad = isnan_(m) || isinf_(m);
	let ls = log1p(s - 1.0); // s ≥ 1: s - 1 is exact near 1, where log is poor
	let inv = 1.0 / s;
	for (var r = 0u; r < params.len; r++) {
		b_out[ob + r * params.ostride] = value(xat(r, xb), m, ls, inv, bad);
	}
}
{{- else}}

// One workgroup per line; both reductions are trees in workgroup memory.
var<workgroup> sh: array<f32, {{.WG}}>;

{{template "row_workgroup" (dict "WG" .WG "Walk" .KeptWalk)}}
	var m = bitcast<f32>(0xff800000u);
	for (var r = lid; r < params.len; r += {{.WG}}u) {
		m = maxc(m, xat(r, xb));
	}
{{template "wg_tree" (dict "WG" .WG "Val" "m" "Combine" "maxc")}}
	let mx = sh[0];
	workgroupBarrier();
	var s = 0.0;
	for (var r = lid; r < params.len; r += {{.WG}}u) {
		s += exp(xat(r, xb) - mx);
	}
{{template "wg_tree" (dict "WG" .WG "Val" "s" "Combine" "+")}}
	let tot = sh[0];
	let bad = isnan_(mx) || isinf_(mx);
	let ls = log1p(tot - 1.0);
	let inv = 1.0 / tot;
	for (var r = lid; r < params.len; r += {{.WG}}u) {
		b_out[ob + r * params.ostride] = value(xat(r, xb), mx, ls, inv, bad);
	}
}
{{- end}}
{{end}}

{{define "cumsum"}}// cumsum ({{.T}}): out[..., i, ...] = x[..., 0, ...] + ... + x[..., i, ...], one
// invocation per line, accumulating in {{.T}} (i32 wraps).
{{template "line_common" .}}
{{template "row_invocation" (dict "WG" .WG "Walk" .KeptWalk)}}
	var acc: {{.T}} = {{.T}}(0);
	for (var r = 0u; r < params.len; r++) {
		acc += xat(r, xb);
		b_out[ob + r * params.ostride] = acc;
	}
}
{{end}}
