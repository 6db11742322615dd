{{define "argreduce"}}// argreduce ({{.Op}}, {{.T}}, {{.Mode}}{{if .PairsIn}}, over partial pairs{{end}}{{if .PairsOut}}, partial{{end}}): the first
// (index, value) with the {{if eq .Op "max"}}largest{{else}}smallest{{end}} value along a line: the first occurrence
// wins ties, and a NaN beats every number (the first NaN wins), as in torch.
{{- if .PairsOut}}
// Each segment of a line writes its winner to pairs[2g] (value bits) and
// pairs[2g + 1] (index along the line), g = (line, segment) flat.
{{- end}}
{{- if .PairsIn}}
// A line is the pairs its segments wrote; indices come from the pairs.
{{- end}}
{{.Struct}}
@group(1) @binding(0) var<uniform> params: Params;
{{- if .PairsOut}}
@group(0) @binding(0) var<storage, read_write> b_pairs: array<u32>;
@group(0) @binding(1) var<storage, read> b_in: array<{{.T}}>;
{{- else}}
@group(0) @binding(0) var<storage, read_write> b_idx: array<i32>;
{{- if .Vals}}
@group(0) @binding(1) var<storage, read_write> b_vals: array<{{.T}}>;
{{- end}}
@group(0) @binding({{if .Vals}}2{{else}}1{{end}}) var<storage, read> b_in: array<{{if .PairsIn}}u32{{else}}{{.T}}{{end}}>;
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

// value and index return element r of the line at xb.
fn value(xb: u32, r: u32) -> {{.T}} {
{{- if .PairsIn}}
	return bitcast<{{.T}}>(b_in[2u * (xb + r * params.xstride)]);
{{- else}}
	return b_in[xb + r * params.xstride];
{{- end}}
}

fn index(xb: u32, r: u32) -> u32 {
{{- if .PairsIn}}
	return b_in[2u * (xb + r * params.xstride) + 1u];
{{- else}}
	return r;
{{- end}}
}
{{- if eq .Mode "serial"}}

// One invocation per (segment, line) (one segment: whole lines).
{{template "row_invocation" (dict "WG" .WG "Walk" .KeptWalk "Segs" true)}}
	let start = s * params.seglen;
	let end = min(start + params.seglen, params.len);
	var b = value(xb, start);
	var bi = index(xb, start);
	// Loop: params.seglen - 1 iterations at most (≤ Limits.MaxLoopTrips - 1).
	for (var r = start + 1u; r < end; r++) {
		let v = value(xb, r);
		let i = index(xb, r);
		if (better(v, i, b, bi)) {
			b = v;
			bi = i;
		}
	}
{{- else}}

var<workgroup> shv: array<{{.T}}, {{.WG}}>;
var<workgroup> shi: array<u32, {{.WG}}>;

// One workgroup per (line, segment).
{{template "row_workgroup" (dict "WG" .WG "Walk" .KeptWalk "Segs" true)}}
	let start = s * params.seglen;
	let end = min(start + params.seglen, params.len);
	// Segments are never empty: invocation lid starts from element
	// start + min(lid, end - start - 1), a duplicate that cannot win over
	// itself.
	let first = start + min(lid, end - start - 1u);
	var b = value(xb, first);
	var bi = index(xb, first);
	// Loop: ⌈params.seglen / {{.WG}}⌉ - 1 iterations at most.
	for (var r = start + lid + {{.WG}}u; r < end; r += {{.WG}}u) {
		let v = value(xb, r);
		let i = index(xb, r);
		if (better(v, i, b, bi)) {
			b = v;
			bi = i;
		}
	}
	shv[lid] = b;
	shi[lid] = bi;
	workgroupBarrier();
	// Tree: log2({{.WG}}) iterations.
	for (var w = {{.WG}}u / 2u; w > 0u; w = w / 2u) {
		if (lid < w && better(shv[lid + w], shi[lid + w], shv[lid], shi[lid])) {
			shv[lid] = shv[lid + w];
			shi[lid] = shi[lid + w];
		}
		workgroupBarrier();
	}
	if (lid != 0u) {
		return;
	}
	b = shv[0];
	bi = shi[0];
{{- end}}
{{- if .PairsOut}}
	b_pairs[2u * g] = bitcast<u32>(b);
	b_pairs[2u * g + 1u] = bi;
{{- else}}
	b_idx[ib] = i32(bi);
{{- if .Vals}}
	b_vals[vb] = b;
{{- end}}
{{- end}}
}
{{end}}
