{{define "matmul_common"}}
{{- .Struct}}
@group(1) @binding(0) var<uniform> params: Params;
@group(0) @binding(0) var<storage, read_write> b_out: array<f32>;
@group(0) @binding(1) var<storage, read> b_a: array<f32>;
@group(0) @binding(2) var<storage, read> b_b: array<f32>;
{{end}}

{{define "matmul_tiled"}}// matmul, tiled: out[b] = a[b] · b[b] with 64×64 output tiles, K in
// steps of 16, 16×16 invocations each holding a 4×4 block in registers.
// Tiles of a (stored k-major) and b go through workgroup memory as vec4
// rows, so the inner loop is 16 vec4 FMAs per k. Operands are read
// through their strides (a transposed operand is read in place); the
// batch is workgroup_id.z, looping when there are more batches than
// workgroups in z; a batch stride of 0 broadcasts.{{if .Fits}} The sizes are
// multiples of the tile, so loads and stores are unguarded.{{end}}
{{template "matmul_common" .}}
var<workgroup> ta: array<vec4<f32>, 256>; // [16 k][64 rows]
var<workgroup> tb: array<vec4<f32>, 256>; // [16 k][64 cols]

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
	let tx = lid.x;
	let ty = lid.y;
	let m0 = wid.y * 64u;
	let n0 = wid.x * 64u;
	let M = params.m;
	let N = params.n;
	let K = params.k;
	let sam = params.sa[0].y;
	let sak = params.sa[0].z;
	let sbk = params.sb[0].y;
	let sbn = params.sb[0].z;
	let som = params.so[0].y;
	let son = params.so[0].z;
	for (var bt = wid.z; bt < params.batch; bt += nwg.z) {
		let ab = params.offs[0].y + bt * params.sa[0].x;
		let bb = params.offs[0].z + bt * params.sb[0].x;
		let ob = params.offs[0].x + bt * params.so[0].x;
		var acc0 = vec4<f32>(0.0);
		var acc1 = vec4<f32>(0.0);
		var acc2 = vec4<f32>(0.0);
		var acc3 = vec4<f32>(0.0);
		for (var k0 = 0u; k0 < K; k0 += 16u) {
{{- range $j := seq 4}}
			{
				let e = t + {{mul $j 256}}u;
{{- if $.AKInner}}
				let mm = e / 16u;
				let kk = e % 16u;
{{- else}}
				let mm = e % 64u;
				let kk = e / 64u;
{{- end}}
				let gm = m0 + mm;
				let gk = k0 + kk;
{{- if $.Fits}}
				ta[kk * 16u + mm / 4u][mm % 4u] = b_a[ab + gm * sam + gk * sak];
{{- else}}
				var v = 0.0;
				if (gm < M && gk < K) {
					v = b_a[ab + gm * sam + gk * sak];
				}
				ta[kk * 16u + mm / 4u][mm % 4u] = v;
{{- end}}
			}
{{- end}}
{{- range $j := seq 4}}
			{
				let e = t + {{mul $j 256}}u;
{{- if $.BNInner}}
				let kk = e / 64u;
				let nn = e % 64u;
{{- else}}
				let nn = e / 16u;
				let kk = e % 16u;
{{- end}}
				let gk = k0 + kk;
				let gn = n0 + nn;
{{- if $.Fits}}
				tb[kk * 16u + nn / 4u][nn % 4u] = b_b[bb + gk * sbk + gn * sbn];
{{- else}}
				var v = 0.0;
				if (gk < K && gn < N) {
					v = b_b[bb + gk * sbk + gn * sbn];
				}
				tb[kk * 16u + nn / 4u][nn % 4u] = v;
{{- end}}
			}
{{- end}}
			workgroupBarrier();
{{- range $k := seq 16}}
			{
				let av = ta[{{mul $k 16}}u + ty];
				let bv = tb[{{mul $k 16}}u + tx];
				acc0 += av.x * bv;
				acc1 += av.y * bv;
				acc2 += av.z * bv;
				acc3 += av.w * bv;
			}
{{- end}}
			workgroupBarrier();
		}
		let row = m0 + ty * 4u;
		let col = n0 + tx * 4u;
{{- range $i := seq 4}}
{{- range $j := seq 4}}
{{- if $.Fits}}
		b_out[ob + (row + {{$i}}u) * som + (col + {{$j}}u) * son] = acc{{$i}}[{{$j}}];
{{- else}}
		if (row + {{$i}}u < M && col + {{$j}}u < N) {
			b_out[ob + (row + {{$i}}u) * som + (col + {{$j}}u) * son] = acc{{$i}}[{{$j}}];
		}
{{- end}}
{{- end}}
{{- end}}
	}
}
{{end}}

{{define "matmul_naive"}}// matmul, naive: one invocation per output element, looping over K (the
// test reference for the tiled kernel).
{{template "matmul_common" .}}
@compute @workgroup_size({{.WX}}, {{.WY}})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
	let col = gid.x;
	let row = gid.y;
	if (row >= params.m || col >= params.n) {
		return;
	}
	for (var bt = wid.z; bt < params.batch; bt += nwg.z) {
		let ab = params.offs[0].y + bt * params.sa[0].x + row * params.sa[0].y;
		let bb = params.offs[0].z + bt * params.sb[0].x + col * params.sb[0].z;
		var acc = 0.0;
		for (var k = 0u; k < params.k; k++) {
			acc += b_a[ab + k * params.sa[0].z] * b_b[bb + k * params.sb[0].y];
		}
		b_out[params.offs[0].x + bt * params.so[0].x + row * params.so[0].y + col * params.so[0].z] = acc;
	}
}
{{end}}

{{define "matmul_tiled128"}}// matmul, tiled: out[b] = a[b] · b[b] with 128×128 output tiles, K in
// steps of 8, 16×16 invocations each holding an 8×8 block in registers
// (rows ty·4 + {0..3} and 64 + ty·4 + {0..3}, columns likewise), tiles in
// workgroup memory as vec4 rows: per k, 4 vec4 loads feed 64 FMAs.
// Strides, batches and guards as in the 64×64 kernel.{{if .Fits}} The sizes are
// multiples of the tile, so loads and stores are unguarded.{{end}}
{{template "matmul_common" .}}
var<workgroup> ta: array<vec4<f32>, 256>; // [8 k][128 rows]
var<workgroup> tb: array<vec4<f32>, 256>; // [8 k][128 cols]

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
	let tx = lid.x;
	let ty = lid.y;
	let m0 = wid.y * 128u;
	let n0 = wid.x * 128u;
	let M = params.m;
	let N = params.n;
	let K = params.k;
	let sam = params.sa[0].y;
	let sak = params.sa[0].z;
	let sbk = params.sb[0].y;
	let sbn = params.sb[0].z;
	let som = params.so[0].y;
	let son = params.so[0].z;
	for (var bt = wid.z; bt < params.batch; bt += nwg.z) {
		let ab = params.offs[0].y + bt * params.sa[0].x;
		let bb = params.offs[0].z + bt * params.sb[0].x;
		let ob = params.offs[0].x + bt * params.so[0].x;
{{- range $i := seq 8}}
		var acc{{$i}}a = vec4<f32>(0.0);
		var acc{{$i}}b = vec4<f32>(0.0);
{{- end}}
		for (var k0 = 0u; k0 < K; k0 += 8u) {
{{- range $j := seq 4}}
			{
				let e = t + {{mul $j 256}}u;
{{- if $.AKInner}}
				let mm = e / 8u;
				let kk = e % 8u;
{{- else}}
				let mm = e % 128u;
				let kk = e / 128u;
{{- end}}
				let gm = m0 + mm;
				let gk = k0 + kk;
{{- if $.Fits}}
				ta[kk * 32u + mm / 4u][mm % 4u] = b_a[ab + gm * sam + gk * sak];
{{- else}}
				var v = 0.0;
				if (gm < M && gk < K) {
					v = b_a[ab + gm * sam + gk * sak];
				}
				ta[kk * 32u + mm / 4u][mm % 4u] = v;
{{- end}}
			}
{{- end}}
{{- range $j := seq 4}}
			{
				let e = t + {{mul $j 256}}u;
{{- if $.BNInner}}
				let kk = e / 128u;
				let nn = e % 128u;
{{- else}}
				let nn = e / 8u;
				let kk = e % 8u;
{{- end}}
				let gk = k0 + kk;
				let gn = n0 + nn;
{{- if $.Fits}}
				tb[kk * 32u + nn / 4u][nn % 4u] = b_b[bb + gk * sbk + gn * sbn];
{{- else}}
				var v = 0.0;
				if (gk < K && gn < N) {
					v = b_b[bb + gk * sbk + gn * sbn];
				}
				tb[kk * 32u + nn / 4u][nn % 4u] = v;
{{- end}}
			}
{{- end}}
			workgroupBarrier();
{{- range $k := seq 8}}
			{
				let a0 = ta[{{mul $k 32}}u + ty];
				let a1 = ta[{{mul $k 32}}u + 16u + ty];
				let b0 = tb[{{mul $k 32}}u + tx];
				let b1 = tb[{{mul $k 32}}u + 16u + tx];
				acc0a += a0.x * b0; acc0b += a0.x * b1;
				acc1a += a0.y * b0; acc1b += a0.y * b1;
				acc2a += a0.z * b0; acc2b += a0.z * b1;
				acc3a += a0.w * b0; acc3b += a0.w * b1;
				acc4a += a1.x * b0; acc4b += a1.x * b1;
				acc5a += a1.y * b0; acc5b += a1.y * b1;
				acc6a += a1.z * b0; acc6b += a1.z * b1;
				acc7a += a1.w * b0; acc7b += a1.w * b1;
			}
{{- end}}
			workgroupBarrier();
		}
{{- range $i := seq 8}}
{{- range $h := seq 2}}
{{- range $j := seq 4}}
		{
			let row = m0 + {{if lt $i 4}}ty * 4u + {{$i}}u{{else}}64u + ty * 4u + {{sub $i 4}}u{{end}};
			let col = n0 + {{if eq $h 0}}tx * 4u{{else}}64u + tx * 4u{{end}} + {{$j}}u;
{{- if $.Fits}}
			b_out[ob + row * som + col * son] = acc{{$i}}{{if eq $h 0}}a{{else}}b{{end}}[{{$j}}];
{{- else}}
			if (row < M && col < N) {
				b_out[ob + row * som + col * son] = acc{{$i}}{{if eq $h 0}}a{{else}}b{{end}}[{{$j}}];
			}
{{- end}}
		}
{{- end}}
{{- end}}
{{- end}}
	}
}
{{end}}
