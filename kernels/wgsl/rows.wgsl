{{/* Pieces shared by the kernels over rows (reduce, argreduce, softmax,
cumsum): each row is an output or a line, o its flat index below
params.nout, and Walk is the WGSL that turns o into the row's offsets
(walk.Code). Call them with (dict "WG" workgroup size "Walk" code ...). */}}

{{/* row_invocation opens main for one invocation per row: o, guarded,
and Walk's offsets; with Segs one per (segment, row): g is the
invocation's flat index, o = g % params.nout (neighbouring invocations
take neighbouring rows) and s = g / params.nout. The caller writes the
body and the closing brace. */}}
{{define "row_invocation"}}@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
{{- if .Segs}}
	let g = (wid.x + wid.y * nwg.x) * {{.WG}}u + lid;
	if (g >= params.nout * params.nseg) {
		return;
	}
	let o = g % params.nout;
	let s = g / params.nout;
{{- else}}
	let o = (wid.x + wid.y * nwg.x) * {{.WG}}u + lid;
	if (o >= params.nout) {
		return;
	}
{{- end}}
{{.Walk}}
{{- end}}

{{/* row_workgroup opens main for one workgroup per row, or with Segs per
(row, segment): g is the workgroup's flat index, o = g / params.nseg and
s = g % params.nseg. Then Walk's offsets; the caller writes the body and
the closing brace. */}}
{{define "row_workgroup"}}@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
{{- if .Segs}}
	let g = wid.x + wid.y * nwg.x;
	if (g >= params.nout * params.nseg) {
		return;
	}
	let o = g / params.nseg;
	let s = g % params.nseg;
{{- else}}
	let o = wid.x + wid.y * nwg.x;
	if (o >= params.nout) {
		return;
	}
{{- end}}
{{.Walk}}
{{- end}}

{{/* wg_tree reduces the invocations' values Val across the workgroup of
WG (a power of two) invocations by a tree in var<workgroup> sh (the
caller declares it, WG elements), combining pairs with Combine, a WGSL
function of two values, or "+". Every invocation reaches it; the result is
sh[0] after the final barrier. */}}
{{define "wg_tree"}}	// Tree: log2({{.WG}}) iterations.
	sh[lid] = {{.Val}};
	workgroupBarrier();
	for (var w = {{.WG}}u / 2u; w > 0u; w = w / 2u) {
		if (lid < w) {
			sh[lid] = {{if eq .Combine "+"}}sh[lid] + sh[lid + w]{{else}}{{.Combine}}(sh[lid], sh[lid + w]){{end}};
		}
		workgroupBarrier();
	}
{{- end}}
