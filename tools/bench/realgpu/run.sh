#!/usr/bin/env bash
# run.sh runs Tessera's benchmark suite on this machine's Vulkan GPU, from
# the bundle that build.sh made: no Go toolchain, no network.
#
#	./run.sh [--icd FILE] [--python PY] [--no-torch] [tessera bench flags...]
#
#	--icd FILE     the Vulkan driver to use: an ICD manifest (.json) or the
#	               driver library itself (e.g. libGLX_nvidia.so.0)
#	--python PY    the interpreter whose PyTorch runs the CUDA counterparts
#	--no-torch     run Tessera alone
#	other flags    go to `tessera bench` (-quick, -rounds N, -workloads ..., -out DIR)
#
# It checks glibc, unpacks the bundled Vulkan loader next to the binary,
# finds the GPU vendor's Vulkan driver (VK_ICD_FILENAMES when set, else
# NVIDIA's manifest or driver library where its installer or container
# runtime puts them, else another vendor's manifest), runs `tessera
# bench` on the CPU and every adapter, and adds -torch when a Python with
# PyTorch and CUDA is found (python3, /usr/bin/python3), so the table
# carries PyTorch CUDA and CPU ratios. Results: the table on stdout,
# bench.json and charts in ./results (or -out).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
icd="" python="" torch=auto
args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--icd) icd=$2; shift 2 ;;
	--icd=*) icd=${1#--icd=}; shift ;;
	--python) python=$2; shift 2 ;;
	--python=*) python=${1#--python=}; shift ;;
	--no-torch) torch=no; shift ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) args+=("$1"); shift ;;
	esac
done
say() { echo "run.sh: $*" >&2; }

# glibc: the binary and the loader were linked against a glibc this new.
need=$(cat "$here/GLIBC_REQUIRED")
have=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}' || true)
if [ -z "$have" ]; then
	say "this system has no glibc (musl?); the bundle needs glibc $need or newer"
	exit 1
fi
if [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -n 1)" != "$need" ]; then
	say "this system has glibc $have; the bundle needs $need or newer (rebuild it on an older distribution)"
	exit 1
fi

# The Vulkan loader, from the bundled Debian package.
loader_dir=$here/vulkan-loader
if [ ! -e "$loader_dir/libvulkan.so.1" ]; then
	deb=$(ls "$here"/libvulkan1_*.deb | head -n 1)
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	if command -v dpkg-deb >/dev/null; then
		dpkg-deb -x "$deb" "$tmp"
	elif command -v python3 >/dev/null; then
		python3 - "$deb" "$tmp" <<'PY'
import io, sys, tarfile
data, pos = open(sys.argv[1], "rb").read(), 8
assert data[:8] == b"!<arch>\n", "not a .deb"
while pos < len(data):
    name, size = data[pos:pos + 16].decode().strip().rstrip("/"), int(data[pos + 48:pos + 58])
    if name.startswith("data.tar"):
        tarfile.open(fileobj=io.BytesIO(data[pos + 60:pos + 60 + size])).extractall(sys.argv[2])
    pos += 60 + size + (size & 1)
PY
	else
		(cd "$tmp" && ar x "$deb" && tar xf data.tar.*)
	fi
	lib=$(find "$tmp" -name 'libvulkan.so.1.*' -type f | head -n 1)
	[ -n "$lib" ] || { say "$deb holds no libvulkan.so.1"; exit 1; }
	mkdir -p "$loader_dir"
	cp "$lib" "$loader_dir/libvulkan.so.1"
fi
export LD_LIBRARY_PATH=$loader_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# The GPU's Vulkan driver (ICD).
manifest_for() { # writes a manifest for driver library $1
	local m=$here/icd-$(basename "$1").json
	printf '{"file_format_version": "1.0.0", "ICD": {"library_path": "%s", "api_version": "1.3.0"}}\n' "$1" >"$m"
	echo "$m"
}
root=${ICD_SEARCH_ROOT:-} # tests search a fake tree
find_icd() {
	local d f
	# NVIDIA's manifest: standard folders, the driver container of NVIDIA's GPU
	# operator, and the vendor folders its container toolkit and .run installer use.
	for d in /etc/vulkan/icd.d /usr/share/vulkan/icd.d /usr/local/etc/vulkan/icd.d /usr/local/share/vulkan/icd.d \
		/run/nvidia/driver/etc/vulkan/icd.d /run/nvidia/driver/usr/share/vulkan/icd.d; do
		for f in "$root$d"/nvidia_icd*.json; do [ -f "$f" ] && { echo "$f"; return; }; done
	done
	for d in /usr/lib/x86_64-linux-gnu/nvidia /usr/lib64/nvidia /usr/local/nvidia /usr/share/nvidia /etc/nvidia; do
		[ -d "$root$d" ] || continue
		f=$(find "$root$d" -maxdepth 4 -name 'nvidia_icd*.json' 2>/dev/null | head -n 1)
		[ -n "$f" ] && { echo "$f"; return; }
	done
	# No manifest (a container given only the driver's libraries, or an EGL
	# vendor file in /usr/share/glvnd/egl_vendor.d): NVIDIA's Vulkan driver is
	# libGLX_nvidia.so.0, next to libEGL_nvidia.
	f=""
	[ -z "$root" ] && f=$(ldconfig -p 2>/dev/null | awk '/libGLX_nvidia\.so\.0 .*x86-64/ {print $NF; exit}')
	for d in /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/local/nvidia/lib64 /usr/lib/x86_64-linux-gnu/nvidia/current \
		/run/nvidia/driver/usr/lib/x86_64-linux-gnu /run/nvidia/driver/usr/lib64; do
		[ -z "$f" ] && [ -e "$root$d/libGLX_nvidia.so.0" ] && f=$root$d/libGLX_nvidia.so.0
	done
	[ -n "$f" ] && { manifest_for "$f"; return; }
	# Another vendor's hardware driver (AMD, Intel), never a software one.
	for d in /etc/vulkan/icd.d /usr/share/vulkan/icd.d /usr/local/share/vulkan/icd.d; do
		for f in "$root$d"/*.json; do
			[ -f "$f" ] || continue
			case $(basename "$f") in lvp_icd* | *swiftshader* | *virtio*) continue ;; esac
			echo "$f"
			return
		done
	done
}
if [ -n "$icd" ]; then
	[ -e "$icd" ] || { say "--icd $icd: no such file"; exit 2; }
	case $icd in *.json) ;; *) icd=$(manifest_for "$(cd "$(dirname "$icd")" && pwd)/$(basename "$icd")") ;; esac
elif [ -n "${VK_ICD_FILENAMES:-${VK_DRIVER_FILES:-}}" ]; then
	icd=${VK_ICD_FILENAMES:-$VK_DRIVER_FILES}
else
	icd=$(find_icd || true)
fi
if [ -n "$icd" ]; then
	export VK_ICD_FILENAMES=$icd VK_DRIVER_FILES=$icd
	say "Vulkan driver: $icd"
else
	say "no Vulkan GPU driver found (pass --icd); the loader searches its default folders"
fi
say "Vulkan loader: $loader_dir/libvulkan.so.1"
devices=$("$here/tessera" devices)
echo "$devices" >&2
if ! grep -q '^  gpu:' <<<"$devices"; then
	say "no Vulkan adapter opened. In a container, NVIDIA's Vulkan driver needs the graphics capability" \
		"(docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics); else pass --icd"
	exit 1
fi

# PyTorch counterparts where PyTorch has CUDA.
torch_args=()
if [ "$torch" = auto ]; then
	for py in ${python:-python3 /usr/bin/python3}; do
		command -v "$py" >/dev/null || continue
		if "$py" -c 'import sys, numpy, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
			torch_args=(-torch -python "$(command -v "$py")")
			say "PyTorch with CUDA: $py"
			break
		fi
	done
	[ ${#torch_args[@]} -gt 0 ] || say "no PyTorch with CUDA (and NumPy) in ${python:-python3, /usr/bin/python3}: Tessera runs alone"
fi
exec "$here/tessera" bench -out "$PWD/results" ${torch_args[@]+"${torch_args[@]}"} ${args[@]+"${args[@]}"}
