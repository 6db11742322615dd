{{define "matmul_common"}}
{{- .Struct}}
@group(1) @binding(0) var<uniform> params: Params;
@group(0) @binding(0) var<storage, read_write> b_out: array<f32>;
@group(0) @binding(1) var<storage, read> b_a{{if .AVec4}}4: array<vec4<f32>>{{else}}: array<f32>{{end}};
@group(0) @binding(2) var<storage, read> b_b{{if .BVec4}}4: array<vec4<f32>>{{else}}: array<f32>{{end}};
{{- range .EpiInputs}}
@group(0) @binding({{.Binding}}) var<storage, read> b_{{.Name}}: array<{{.Arr}}>;
{{- end}}
{{if .Last}}{{.EpiFn}}{{end}}
{{- end}}

{{define "matmul_tiled"}}// matmul, tiled: out[b] = a[b] · b[b] with {{.TM}}×{{.TN}} output tiles, K in
// steps of {{.KS}}, 16×16 invocations each holding {{.RM}}×{{.RN}} outputs in
// registers (rows ty·4 + {0..3} + 64·i, i < {{.VM}}, and columns tx·4 + {0..3}
// + 64·j, j < {{.VN}}, of the tile). Tiles of a (stored k-major) and b go
// through workgroup memory as vec4 rows: per k, {{.LoadsPerK}} vec4 loads feed
// {{.FMAsPerK}} vec4 FMAs. Operands are read through their strides (a
// transposed operand is read in place); the batch is params.bbeg +
// workgroup_id.z, below params.bend; a batch stride of 0 broadcasts. The
// kernel sums over k in [params.kbeg, params.kend){{if .Acc}}, adding to what out holds
// (the sum over the earlier ranges of K){{end}}.{{if and .Fns .Last}} Each sum is stored through the
// epilogue epi_, an elementwise expression of it and the inputs at its element.{{end}}{{if .Fits}} The sizes are multiples of the tile, so loads
// and stores are unguarded.{{end}}
{{- if or .AVec4 .BVec4}}
// Global loads as vec4:{{if .AVec4}} a along {{if .AKInner}}k{{else}}m{{end}}{{end}}{{if and .AVec4 .BVec4}},{{end}}{{if .BVec4}} b along {{if .BNInner}}n{{else}}k{{end}}{{end}}.
{{- end}}
{{template "matmul_common" .}}
var<workgroup> ta: array<vec4<f32>, {{.TileVecsA}}>; // [{{.KS}} k][{{.TM}} rows]
var<workgroup> tb: array<vec4<f32>, {{.TileVecsB}}>; // [{{.KS}} k][{{.TN}} cols]

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
	let tx = lid.x;
	let ty = lid.y;
	let m0 = wid.y * {{.TM}}u;
	let n0 = wid.x * {{.TN}}u;
	let M = params.m;
	let N = params.n;
	let K = params.k;
	let sam = params.sa[0].y;
	let sak = params.sa[0].z;
	let sbk = params.sb[0].y;
	let sbn = params.sb[0].z;
	let som = params.so[0].y;
	let son = params.so[0].z;
	// Loop: one iteration (a plan runs one kernel per range of at most
	// num_workgroups.z batches).
	for (var bt = params.bbeg + wid.z; bt < params.bend; bt += nwg.z) {
		let ab = params.offs[0].y + bt * params.sa[0].x;
		let bb = params.offs[0].z + bt * params.sb[0].x;
		let ob = params.offs[0].x + bt * params.so[0].x;
{{- range .Accs}}
		var {{.}} = vec4<f32>(0.0);
{{- end}}
{{- if .Acc}}
{{- range .Outs}}
		{
			let row = m0 + ty * 4u + {{.Row}}u;
			let col = n0 + tx * 4u + {{.Col}}u;
{{- if $.Fits}}
			{{.Acc}} = b_out[ob + row * som + col * son];
{{- else}}
			if (row < M && col < N) {
				{{.Acc}} = b_out[ob + row * som + col * son];
			}
{{- end}}
		}
{{- end}}
{{- end}}
		// Loop: ⌈(params.kend - params.kbeg) / {{.KS}}⌉ iterations (a plan runs one
		// kernel per range of K, kend - kbeg a multiple of {{.KS}} but in the last).
		for (var k0 = params.kbeg; k0 < params.kend; k0 += {{.KS}}u) {
{{- template "matmul_load" .LoadA}}
{{- template "matmul_load" .LoadB}}
			workgroupBarrier();
{{- range .KSteps}}
			{
{{- range .A}}
				let {{.Var}} = ta[{{.At}}u + ty];
{{- end}}
{{- range .B}}
				let {{.Var}} = tb[{{.At}}u + tx];
{{- end}}
{{- range $.FMAs}}
				{{range $j, $f := .}}{{if $j}} {{end}}{{$f.Acc}} += {{$f.A}} * {{$f.B}};{{end}}
{{- end}}
			}
{{- end}}
			workgroupBarrier();
		}
{{- range .Outs}}
		{
			let row = m0 + ty * 4u + {{.Row}}u;
			let col = n0 + tx * 4u + {{.Col}}u;
{{- if $.Fits}}
			b_out[ob + row * som + col * son] = {{$.Store .Acc}};
{{- else}}
			if (row < M && col < N) {
				b_out[ob + row * som + col * son] = {{$.Store .Acc}};
			}
{{- end}}
		}
{{- end}}
	}
}
{{end}}

{{/* matmul_load stores an operand's tile for this K step in workgroup
memory (see mmLoad, which computes every index and address): each round
of 256 invocations reads element e (a vec4 with .Vec4), guarded unless
.Fits, and stores it. */}}
{{define "matmul_load"}}
{{- range .Steps}}
			{{if .Guarded}}if (t + {{.Base}}u < {{$.Elems}}u) {{end}}{
				let e = t + {{.Base}}u;
				let {{$.Local}} = {{$.XIndex}};
				let kk = {{$.KIndex}};
				let {{$.Global}} = {{$.Origin}} + {{$.Local}};
				let gk = k0 + kk;
{{- if not $.Fits}}
				var v = {{$.Zero}};
				if ({{$.Global}} < {{$.Ext}} && gk < K) {
					v = {{$.Binding}}[{{$.Addr}}];
				}
{{- else if $.Vec4}}
				let v = {{$.Binding}}[{{$.Addr}}];
{{- end}}
{{- range $.Stores}}
				{{.Dst}} = {{.Src}};
{{- end}}
			}
{{- end}}
{{- end}}

{{define "matmul_naive"}}// matmul, naive: one invocation per output element, looping over k in
// [params.kbeg, params.kend){{if .Acc}} and adding to what out holds{{end}} (the test reference for the tiled
// kernel).
{{template "matmul_common" .}}
@compute @workgroup_size({{.WX}}, {{.WY}})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
	let col = gid.x;
	let row = gid.y;
	if (row >= params.m || col >= params.n) {
		return;
	}
	// Loop: one iteration (a plan runs one kernel per range of at most
	// num_workgroups.z batches).
	for (var bt = params.bbeg + wid.z; bt < params.bend; bt += nwg.z) {
		let ab = params.offs[0].y + bt * params.sa[0].x + row * params.sa[0].y;
		let bb = params.offs[0].z + bt * params.sb[0].x + col * params.sb[0].z;
		let at = params.offs[0].x + bt * params.so[0].x + row * params.so[0].y + col * params.so[0].z;
		var acc = {{if .Acc}}b_out[at]{{else}}0.0{{end}};
		// Loop: params.kend - params.kbeg iterations (a plan runs one kernel
		// per range of K).
		for (var k = params.kbeg; k < params.kend; k++) {
			acc += b_a[ab + k * params.sa[0].z] * b_b[bb + k * params.sb[0].y];
		}
		b_out[at] = {{.Store "acc"}};
	}
}
{{end}}
