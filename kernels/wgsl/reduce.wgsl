{{define "reduce_common"}}
{{- .Struct}}
@group(1) @binding(0) var<uniform> params: Params;
@group(0) @binding(0) var<storage, read_write> b_out: array<{{.T}}>;
{{- if .Fns}}
{{- range .ProInputs}}
@group(0) @binding({{.Binding}}) var<storage, read> b_{{.Name}}: array<{{.Arr}}>;
{{- end}}
{{- else}}
@group(0) @binding(1) var<storage, read> b_x: array<{{.T}}>;
{{- end}}
{{.Prelude}}
// xval is element i of x{{if .Fns}}, computed by the prologue from its inputs{{end}}.
{{.XVal}}

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
// One invocation per (segment, output) (one segment: whole outputs).
{{template "row_invocation" (dict "WG" .WG "Walk" .KeptWalk "Segs" true)}}
	let start = s * params.seglen;
	let end = min(start + params.seglen, params.nred);
	var acc: {{.T}} = {{.Identity}};
	// Loop: params.seglen iterations at most (≤ Limits.MaxLoopTrips - 1).
	for (var r = start; r < end; r++) {
		acc = combine(acc, xval(xb + xoff(r)));
	}
{{- if .Partial}}
	b_out[g] = acc;
{{- else}}
	b_out[ob] = acc;
{{- end}}
}
{{- else}}
// One workgroup per (output, segment of the reduced box): a strided loop
// per invocation, then a tree in workgroup memory.
var<workgroup> sh: array<{{.T}}, {{.WG}}>;

{{template "row_workgroup" (dict "WG" .WG "Walk" .KeptWalk "Segs" true)}}
	let start = s * params.seglen;
	let end = min(start + params.seglen, params.nred);
	var acc: {{.T}} = {{.Identity}};
	// Loop: ⌈params.seglen / {{.WG}}⌉ iterations at most.
	for (var r = start + lid; r < end; r += {{.WG}}u) {
		acc = combine(acc, xval(xb + xoff(r)));
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
