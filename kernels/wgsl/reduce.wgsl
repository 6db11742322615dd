{{define "reduce_common"}}
{{- .Struct}}
@group(1) @binding(0) var<uniform> params: Params;
@group(0) @binding(0) var<storage, read_write> b_out: array<{{.T}}>;
@group(0) @binding(1) var<storage, read> b_x: array<{{.T}}>;
{{.Prelude}}
// combine folds v into the accumulator a.
fn combine(a: {{.T}}, v: {{.T}}) -> {{.T}} {
{{- if eq .Op "sum"}}
	return a + v;
{{- else if eq .T "i32"}}
	return {{.Op}}(a, v);
{{- else}}
	// NaN wins. Comparisons never see a NaN: with fast-math, lavapipe may
	// answer true for an unordered compare.
	if (isnan_(a) || isnan_(v)) {
		return select(v, a, isnan_(a));
	}
	return select(a, v, v {{if eq .Op "max"}}>{{else}}<{{end}} a);
{{- end}}
}

// xoff returns the offset in x of element r of the reduced box.
fn xoff(r: u32) -> u32 {
{{.RedWalk}}
	return ro;
}
{{end}}

{{define "reduce"}}// reduce ({{.Op}}, {{.T}}, {{.Mode}}): out[o] = {{.Op}} of x over the reduced
// box of output o. Kept and reduced dimensions are coalesced; the reduced
// box is walked by a flat index r.
{{template "reduce_common" .}}
{{- if eq .Mode "serial"}}
// One invocation per output.
{{template "row_invocation" (dict "WG" .WG "Walk" .KeptWalk)}}
	var acc: {{.T}} = {{.Identity}};
	for (var r = 0u; r < params.nred; r++) {
		acc = combine(acc, b_x[xb + xoff(r)]);
	}
	b_out[ob] = acc;
}
{{- else}}
// One workgroup per (output, segment of the reduced box): a strided loop
// per invocation, then a tree in workgroup memory.
var<workgroup> sh: array<{{.T}}, {{.WG}}>;

{{template "row_workgroup" (dict "WG" .WG "Walk" .KeptWalk "Segs" true)}}
	let start = s * params.seglen;
	let end = min(start + params.seglen, params.nred);
	var acc: {{.T}} = {{.Identity}};
	for (var r = start + lid; r < end; r += {{.WG}}u) {
		acc = combine(acc, b_x[xb + xoff(r)]);
	}
{{template "wg_tree" (dict "WG" .WG "Val" "acc" "Combine" "combine")}}
	if (lid == 0u) {
{{- if .Partial}}
		b_out[g] = sh[0];
{{- else}}
		b_out[ob] = sh[0];
{{- end}}
	}
}
{{- end}}
{{end}}

{{define "argreduce"}}// argreduce ({{.Op}}, {{.T}}, {{.Mode}}): idx[o] (and vals[o]) = arg{{.Op}} of x
// along one dim: the first occurrence wins ties, and a NaN beats every
// number (the first NaN wins), as in torch.
{{.Struct}}
@group(1) @binding(0) var<uniform> params: Params;
@group(0) @binding(0) var<storage, read_write> b_idx: array<i32>;
{{- if .Vals}}
@group(0) @binding(1) var<storage, read_write> b_vals: array<{{.T}}>;
@group(0) @binding(2) var<storage, read> b_x: array<{{.T}}>;
{{- else}}
@group(0) @binding(1) var<storage, read> b_x: array<{{.T}}>;
{{- end}}
{{.Prelude}}
// better reports whether (v, i) beats (b, bi).
fn better(v: {{.T}}, i: u32, b: {{.T}}, bi: u32) -> bool {
{{- if eq .T "f32"}}
	let vn = isnan_(v);
	let bn = isnan_(b);
	if (vn || bn) {
		return vn && (!bn || i < bi);
	}
{{- end}}
	return v {{if eq .Op "max"}}>{{else}}<{{end}} b || (v == b && i < bi);
}
{{- if eq .Mode "serial"}}

{{template "row_invocation" (dict "WG" .WG "Walk" .KeptWalk)}}
	var b = b_x[xb];
	var bi = 0u;
	for (var r = 1u; r < params.len; r++) {
		let v = b_x[xb + r * params.xstride];
		if (better(v, r, b, bi)) {
			b = v;
			bi = r;
		}
	}
	b_idx[ib] = i32(bi);
{{- if .Vals}}
	b_vals[vb] = b;
{{- end}}
}
{{- else}}

var<workgroup> shv: array<{{.T}}, {{.WG}}>;
var<workgroup> shi: array<u32, {{.WG}}>;

{{template "row_workgroup" (dict "WG" .WG "Walk" .KeptWalk)}}
	// Lines are never empty: invocation lid starts from element
	// min(lid, len-1), a duplicate that cannot win over itself.
	var bi = min(lid, params.len - 1u);
	var b = b_x[xb + bi * params.xstride];
	for (var r = lid + {{.WG}}u; r < params.len; r += {{.WG}}u) {
		let v = b_x[xb + r * params.xstride];
		if (better(v, r, b, bi)) {
			b = v;
			bi = r;
		}
	}
	shv[lid] = b;
	shi[lid] = bi;
	workgroupBarrier();
	for (var w = {{.WG}}u / 2u; w > 0u; w = w / 2u) {
		if (lid < w && better(shv[lid + w], shi[lid + w], shv[lid], shi[lid])) {
			shv[lid] = shv[lid + w];
			shi[lid] = shi[lid + w];
		}
		workgroupBarrier();
	}
	if (lid == 0u) {
		b_idx[ib] = i32(shi[0]);
{{- if .Vals}}
		b_vals[vb] = shv[0];
{{- end}}
	}
}
{{- end}}
{{end}}
