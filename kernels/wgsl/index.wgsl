{{define "index_position"}}
	let t = (wid.x + wid.y * nwg.x) * {{.WG}}u + lid;
	if (t >= params.n) {
		return;
	}
{{- if .DimInner}}
	let o = t / params.len;
	let c = t % params.len;
{{- else}}
	let o = t % params.nlines;
	let c = t / params.nlines;
{{- end}}
{{.Walk}}
{{- end}}

{{define "gather"}}// gather: one invocation per output element p; with c = p's coordinate
// along dim and j = {{if .Slice}}(c - start) / step when c lies on the slice
// start, start + step, ... (SliceScatter){{else}}index[...] (IndexSelect: index[c]; Gather: the index
// element at p){{end}}, out[p] = x[p with coordinate j along dim]. {{if .Slice}}Off the
// slice, or{{else}}An index{{end}} outside [0, xlen), it reads nothing and writes 0{{if not .Slice}} (the CPU
// rejects such an index before running){{end}}. Elements move as u32 bits, so one kernel
// serves every 4-byte type. No loops.
{{.Struct}}
@group(1) @binding(0) var<uniform> params: Params;
@group(0) @binding(0) var<storage, read_write> b_out: array<u32>;
@group(0) @binding(1) var<storage, read> b_x: array<u32>;
{{- if not .Slice}}
@group(0) @binding(2) var<storage, read> b_index: array<i32>;
{{- end}}

@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
{{- template "index_position" .}}
	var v = 0u;
{{- if .Slice}}
	if (c >= params.start && (c - params.start) % params.step == 0u) {
		let j = (c - params.start) / params.step;
		if (j < params.xlen) {
			v = b_x[xb + j * params.xstride];
		}
	}
{{- else}}
	let j = b_index[ib + c * params.istride];
	if (j >= 0 && u32(j) < params.xlen) {
		v = b_x[xb + u32(j) * params.xstride];
	}
{{- end}}
	b_out[ob + c * params.ostride] = v;
}
{{end}}

{{define "scatter"}}// scatter-{{if .Max}}max{{else}}add{{end}} ({{.T}}), deterministic: one invocation per destination
// element p with coordinate c along dim scans the source positions j along
// dim (params.jbeg ≤ j < params.jend, a range of [0, src's extent)) that
// share p's other coordinates, and {{if .Max}}takes the maximum of src[j] (a NaN on
// either side winning){{else}}adds src[j]{{end}} where index[j] == c, in
// increasing j: the CPU's order, so results are bitwise equal. Costs
// jend - jbeg index reads per destination element.
// Indices outside [0, len) match nothing: out-of-range entries are
// skipped and nothing is written out of bounds.
{{.Struct}}
@group(1) @binding(0) var<uniform> params: Params;
@group(0) @binding(0) var<storage, read_write> b_dst: array<{{.T}}>;
@group(0) @binding(1) var<storage, read> b_index: array<i32>;
@group(0) @binding(2) var<storage, read> b_src: array<{{.T}}>;
{{.Prelude}}

@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
{{- template "index_position" .}}
{{- if .Bounded}}
	if (!inside) {
		return;
	}
{{- end}}
	let at = ob + c * params.ostride;
	var acc = b_dst[at];
	var hit = false;
	let ci = i32(c);
	// Loop: params.jend - params.jbeg iterations (≤ Limits.MaxLoopTrips - 1;
	// a plan runs one kernel per range of j, in order).
	for (var j = params.jbeg; j < params.jend; j++) {
		if (b_index[ib + j * params.istride] == ci) {
{{- if and .Max (eq .T "f32")}}
			let v = b_src[sb + j * params.sstride];
			acc = select(select(acc, v, v > acc || isnan_(v)), acc, isnan_(acc));
{{- else if .Max}}
			acc = max(acc, b_src[sb + j * params.sstride]);
{{- else}}
			acc += b_src[sb + j * params.sstride];
{{- end}}
			hit = true;
		}
	}
	if (hit) {
		b_dst[at] = acc;
	}
}
{{end}}
