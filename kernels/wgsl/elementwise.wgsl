{{define "elementwise"}}// elementwise: b_out[i] = op_(x, y, z, ...) over n elements ({{.Mode}}).
// The op's expression comes from the op table; x, y, z are the inputs
// (bool inputs as WGSL bool), p0 and p1 its scalar parameters. A fused
// expression's op_ calls one function per op, each an op's expression. No loops
// but the prelude's: pow_ costs at most 34 trips a call, 4 calls in vec4
// mode, whatever the shape.
{{.Struct}}
@group(1) @binding(0) var<uniform> params: Params;
@group(0) @binding(0) var<storage, read_write> b_out: array<{{.OutArr}}>;
{{- range .Inputs}}
@group(0) @binding({{.Binding}}) var<storage, read> b_{{.Name}}: array<{{.Arr}}>;
{{- end}}
{{.Prelude}}
{{.OpFn}}

@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
	let i = (wid.x + wid.y * nwg.x) * {{.WG}}u + lid;
	if (i >= params.n) {
		return;
	}
{{- if eq .Mode "strided"}}
{{.Walk}}
	b_out[o0] = {{.Result .Args}};
{{- else if eq .Mode "contig"}}
	b_out[params.offs[0].x + i] = {{.Result .Args}};
{{- else}}
{{- range .VecLoads}}
	{{.}}
{{- end}}
	var r: {{.OutArr}};
{{- range $c, $args := .VecArgs}}
	r[{{$c}}] = {{$.Result $args}};
{{- end}}
	b_out[params.offs[0].x + i] = r;
{{- end}}
}
{{end}}
