{{define "matmul_common"}}
{{- .Struct}}
@group(1) @binding(0) var<uniform> params: Params;
@group(0) @binding(0) var<storage, read_write> b_out: array<f32>;
@group(0) @binding(1) var<storage, read> b_a{{if .AVec4}}4: array<vec4<f32>>{{else}}: array<f32>{{end}};
@group(0) @binding(2) var<storage, read> b_b{{if .BVec4}}4: array<vec4<f32>>{{else}}: array<f32>{{end}};
{{end}}

{{define "matmul_tiled"}}// matmul, tiled: out[b] = a[b] · b[b] with {{.TM}}×{{.TN}} output tiles, K in
// steps of {{.KS}}, 16×16 invocations each holding {{.RM}}×{{.RN}} outputs in
// registers (rows ty·4 + {0..3} + 64·i, i < {{.VM}}, and columns tx·4 + {0..3}
// + 64·j, j < {{.VN}}, of the tile). Tiles of a (stored k-major) and b go
// through workgroup memory as vec4 rows: per k, {{add .VM .VN}} vec4 loads feed
// {{mul .RM .VN}} vec4 FMAs. Operands are read through their strides (a
// transposed operand is read in place); the batch is params.bbeg +
// workgroup_id.z, below params.bend; a batch stride of 0 broadcasts. The
// kernel sums over k in [params.kbeg, params.kend){{if .Acc}}, adding to what out holds
// (the sum over the earlier ranges of K){{end}}.{{if .Fits}} The sizes are multiples of the tile, so loads
// and stores are unguarded.{{end}}
{{- if or .AVec4 .BVec4}}
// Global loads as vec4:{{if .AVec4}} a along {{if .AKInner}}k{{else}}m{{end}}{{end}}{{if and .AVec4 .BVec4}},{{end}}{{if .BVec4}} b along {{if .BNInner}}n{{else}}k{{end}}{{end}}.
{{- end}}
{{template "matmul_common" .}}
var<workgroup> ta: array<vec4<f32>, {{mul .KS .VecM}}>; // [{{.KS}} k][{{.TM}} rows]
var<workgroup> tb: array<vec4<f32>, {{mul .KS .VecN}}>; // [{{.KS}} k][{{.TN}} cols]

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
{{- range $i := seq .RM}}{{range $j := seq $.VN}}
		var acc{{$i}}_{{$j}} = vec4<f32>(0.0);
{{- end}}{{end}}
{{- if .Acc}}
{{- range $i := seq .RM}}{{range $j := seq $.VN}}{{range $c := seq 4}}
		{
			let row = m0 + ty * 4u + {{add (mul (div $i 4) 64) (mod $i 4)}}u;
			let col = n0 + tx * 4u + {{add (mul $j 64) $c}}u;
{{- if $.Fits}}
			acc{{$i}}_{{$j}}[{{$c}}] = b_out[ob + row * som + col * son];
{{- else}}
			if (row < M && col < N) {
				acc{{$i}}_{{$j}}[{{$c}}] = b_out[ob + row * som + col * son];
			}
{{- end}}
		}
{{- end}}{{end}}{{end}}
{{- end}}
		// Loop: ⌈(params.kend - params.kbeg) / {{.KS}}⌉ iterations (a plan runs one
		// kernel per range of K, kend - kbeg a multiple of {{.KS}} but in the last).
		for (var k0 = params.kbeg; k0 < params.kend; k0 += {{.KS}}u) {
{{- template "matmul_load" (dict "Op" "a" "X" "m" "Ext" "M" "Size" .TM "KInner" .AKInner "KS" .KS "Fits" .Fits "Vec4" .AVec4)}}
{{- template "matmul_load" (dict "Op" "b" "X" "n" "Ext" "N" "Size" .TN "KInner" (not .BNInner) "KS" .KS "Fits" .Fits "Vec4" .BVec4)}}
			workgroupBarrier();
{{- range $k := seq .KS}}
			{
{{- range $v := seq $.VM}}
				let a{{$v}} = ta[{{add (mul $k $.VecM) (mul $v 16)}}u + ty];
{{- end}}
{{- range $v := seq $.VN}}
				let b{{$v}} = tb[{{add (mul $k $.VecN) (mul $v 16)}}u + tx];
{{- end}}
{{- range $i := seq $.RM}}
				{{range $j := seq $.VN}}{{if $j}} {{end}}acc{{$i}}_{{$j}} += a{{div $i 4}}.{{lane $i}} * b{{$j}};{{end}}
{{- end}}
			}
{{- end}}
			workgroupBarrier();
		}
{{- range $i := seq .RM}}{{range $j := seq $.VN}}{{range $c := seq 4}}
		{
			let row = m0 + ty * 4u + {{add (mul (div $i 4) 64) (mod $i 4)}}u;
			let col = n0 + tx * 4u + {{add (mul $j 64) $c}}u;
{{- if $.Fits}}
			b_out[ob + row * som + col * son] = acc{{$i}}_{{$j}}[{{$c}}];
{{- else}}
			if (row < M && col < N) {
				b_out[ob + row * som + col * son] = acc{{$i}}_{{$j}}[{{$c}}];
			}
{{- end}}
		}
{{- end}}{{end}}{{end}}
	}
}
{{end}}

{{/* matmul_load stores operand Op's tile for this K step in workgroup
memory, t{Op}[kk][x] as vec4 rows of Size/4: x (local m for a, n for b;
X names it) and kk (local k) come from the invocation index, kk varying
fastest when k is the operand's inner dimension (KInner), so that
neighbouring invocations read neighbouring elements. Out-of-range elements
(past Ext or K) load as 0 unless Fits. With Vec4 the operand is bound as
b_{Op}4: array<vec4<f32>> and each invocation reads whole vec4s of four
elements along its inner dimension (stride 1, extent, offset and other
strides multiples of 4: see vec4Along), so a vec4 lies wholly inside or
outside the operand and the guard is per vec4; one along x is stored
whole, one along k as four lanes of consecutive kk rows. */}}
{{define "matmul_load"}}
{{- $x := print .X .X}}{{$g := print "g" .X}}
{{- if .Vec4}}
{{- $nv := div (mul .Size .KS) 4}}{{$vx := div .Size 4}}{{$vk := div .KS 4}}
{{- $addr := print "(" .Op "b + " $g " * s" .Op .X " + gk) / 4u"}}
{{- if not .KInner}}{{$addr = print "(" .Op "b + " $g " + gk * s" .Op "k) / 4u"}}{{end}}
{{- range $j := seq (div (add $nv 255) 256)}}
			{{if gt (mul (add $j 1) 256) $nv}}if (t + {{mul $j 256}}u < {{$nv}}u) {{end}}{
				let e = t + {{mul $j 256}}u;
{{- if $.KInner}}
				let {{$x}} = e / {{$vk}}u;
				let kk = e % {{$vk}}u * 4u;
{{- else}}
				let {{$x}} = e % {{$vx}}u * 4u;
				let kk = e / {{$vx}}u;
{{- end}}
				let {{$g}} = {{$.X}}0 + {{$x}};
				let gk = k0 + kk;
{{- if $.Fits}}
				let v = b_{{$.Op}}4[{{$addr}}];
{{- else}}
				var v = vec4<f32>();
				if ({{$g}} < {{$.Ext}} && gk < K) {
					v = b_{{$.Op}}4[{{$addr}}];
				}
{{- end}}
{{- if $.KInner}}
{{- range $c := seq 4}}
				t{{$.Op}}[(kk + {{$c}}u) * {{$vx}}u + {{$x}} / 4u][{{$x}} % 4u] = v.{{lane $c}};
{{- end}}
{{- else}}
				t{{$.Op}}[kk * {{$vx}}u + {{$x}} / 4u] = v;
{{- end}}
			}
{{- end}}
{{- else}}
{{- range $j := seq (div (mul .Size .KS) 256)}}
			{
				let e = t + {{mul $j 256}}u;
{{- if $.KInner}}
				let {{$x}} = e / {{$.KS}}u;
				let kk = e % {{$.KS}}u;
{{- else}}
				let {{$x}} = e % {{$.Size}}u;
				let kk = e / {{$.Size}}u;
{{- end}}
				let {{$g}} = {{$.X}}0 + {{$x}};
				let gk = k0 + kk;
{{- if $.Fits}}
				t{{$.Op}}[kk * {{div $.Size 4}}u + {{$x}} / 4u][{{$x}} % 4u] = b_{{$.Op}}[{{$.Op}}b + {{$g}} * s{{$.Op}}{{$.X}} + gk * s{{$.Op}}k];
{{- else}}
				var v = 0.0;
				if ({{$g}} < {{$.Ext}} && gk < K) {
					v = b_{{$.Op}}[{{$.Op}}b + {{$g}} * s{{$.Op}}{{$.X}} + gk * s{{$.Op}}k];
				}
				t{{$.Op}}[kk * {{div $.Size 4}}u + {{$x}} / 4u][{{$x}} % 4u] = v;
{{- end}}
			}
{{- end}}
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
		b_out[at] = acc;
	}
}
{{end}}
