#!/usr/bin/env bash
# build.sh builds the self-contained real-GPU benchmark bundle: a folder
# (and a .tar.gz of it) to copy to a Linux x86-64 machine with a Vulkan
# GPU, where run.sh runs `tessera bench` without a Go toolchain or network.
#
#	tools/bench/realgpu/build.sh [-o DIR] [--deb libvulkan1_*.deb]
#
# The bundle holds:
#   tessera          the command, cgo-linked with wgpu-native's static library; only
#                    glibc (libc, libm, ld-linux) and libgcc_s are loaded dynamically,
#                    and the Vulkan loader and the GPU driver are opened at run time
#                    (libgcc stays dynamic: its static unwinder would need glibc 2.35)
#   libvulkan1_*.deb Debian's Vulkan loader, unpacked by run.sh next to the binary
#   run.sh           finds the GPU's Vulkan driver (ICD), runs the bench and, where
#                    PyTorch has CUDA, the PyTorch counterparts
#   README.md, GLIBC_REQUIRED (the newest glibc symbol version the binary or the
#   loader needs, found with objdump), BUILD_INFO
#
# The loader .deb comes from --deb, else $TESSERA_DEB_CACHE (default
# ~/.cache/tessera-bench), else apt's cache, else `apt-get download
# libvulkan1`, which is kept in $TESSERA_DEB_CACHE for the next build.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
out=$PWD/tessera-bench-bundle
deb=""
while [ $# -gt 0 ]; do
	case "$1" in
	-o) out=$2; shift 2 ;;
	--deb) deb=$2; shift 2 ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "build.sh: unknown argument $1 (want -o DIR, --deb FILE)" >&2; exit 2 ;;
	esac
done
for tool in go objdump; do
	command -v "$tool" >/dev/null || { echo "build.sh: $tool is needed (Go toolchain, binutils)" >&2; exit 1; }
done
[ "$(go env GOOS)/$(go env GOARCH)" = linux/amd64 ] || { echo "build.sh: builds for linux/amd64 only (wgpu-native's static library)" >&2; exit 1; }

mkdir -p "$out"
out=$(cd "$out" && pwd)

echo "== tessera (cgo, wgpu-native static, glibc and libgcc_s dynamic)"
(cd "$repo" && CGO_ENABLED=1 go build -ldflags "-s -w" -o "$out/tessera" ./cmd/tessera)

echo "== libvulkan1 (Debian's Vulkan loader)"
cache=${TESSERA_DEB_CACHE:-$HOME/.cache/tessera-bench}
if [ -z "$deb" ]; then
	deb=$(ls "$cache"/libvulkan1_*_amd64.deb /var/cache/apt/archives/libvulkan1_*_amd64.deb 2>/dev/null | head -n 1 || true)
fi
if [ -z "$deb" ]; then
	mkdir -p "$cache"
	(cd "$cache" && apt-get download libvulkan1:amd64) >&2 || {
		echo "build.sh: cannot download libvulkan1 (no network or not Debian); pass --deb libvulkan1_*_amd64.deb" >&2
		exit 1
	}
	deb=$(ls "$cache"/libvulkan1_*_amd64.deb | head -n 1)
fi
rm -f "$out"/libvulkan1_*.deb
cp "$deb" "$out/"

echo "== glibc needed"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$deb" "$tmp" 2>/dev/null || (cd "$tmp" && ar x "$deb" && tar xf data.tar.*)
loader=$(find "$tmp" -name 'libvulkan.so.1.*' -type f | head -n 1)
[ -n "$loader" ] || { echo "build.sh: $deb holds no libvulkan.so.1" >&2; exit 1; }
glibc() { objdump -T "$1" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -Vu | tail -n 1; }
need_bin=$(glibc "$out/tessera")
need_loader=$(glibc "$loader")
need=$(printf '%s\n%s\n' "$need_bin" "$need_loader" | sort -V | tail -n 1)
echo "$need" >"$out/GLIBC_REQUIRED"
echo "glibc $need (binary $need_bin, loader $need_loader)"
if objdump -p "$out/tessera" | awk '/NEEDED/ {print $2}' | grep -v -E '^(libc|libm|libdl|libpthread|libgcc_s|ld-linux-x86-64)\.so'; then
	echo "build.sh: the binary needs a shared library besides glibc and libgcc_s (above)" >&2
	exit 1
fi

cp "$here/run.sh" "$here/README.md" "$out/"
chmod +x "$out/run.sh" "$out/tessera"
{
	echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) by $(go version)"
	echo "commit $(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)$(git -C "$repo" diff --quiet HEAD 2>/dev/null || echo ' (with local changes)')"
	echo "loader $(basename "$deb")"
	echo "glibc $need or newer (binary $need_bin, loader $need_loader)"
} >"$out/BUILD_INFO"
tar czf "$out.tar.gz" -C "$(dirname "$out")" "$(basename "$out")"
echo "== bundle: $out ($(du -sh "$out" | cut -f1)), $out.tar.gz"
