#!/usr/bin/env bash
# ci/test.sh runs every check CI runs, in order, stopping at the first
# failure. It installs what the tests need on a fresh Debian machine
# (Mesa's lavapipe software Vulkan adapter, Open MPI) when it is missing.
#
#	ci/test.sh                          # GPU tests skip when no adapter opens
#	TESSERA_REQUIRE_GPU=1 ci/test.sh    # CI: a missing adapter fails instead
set -euo pipefail
cd "$(dirname "$0")/.."
module=$(go list -m)

echo "== lavapipe (mesa-vulkan-drivers, libvulkan1) and Open MPI (libopenmpi-dev, openmpi-bin)"
pkgs=""
if ! ldconfig -p | grep -q 'libvulkan.so.1' || ! ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1; then
	pkgs="mesa-vulkan-drivers libvulkan1"
fi
if ! mpirun --version 2>/dev/null | grep 'Open MPI' >/dev/null || ! ldconfig -p | grep -q 'libmpi.so.40'; then
	pkgs="$pkgs libopenmpi-dev openmpi-bin"
fi
if [ -n "$pkgs" ]; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo apt-get update -q
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q $pkgs
fi
# Package distributed's np=2 tests run under mpirun, installed above: a
# missing one fails them instead of skipping.
export TESSERA_REQUIRE_MPI=1

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	echo "$unformatted"
	exit 1
fi

echo "== go vet"
go vet ./...

echo "== builds and runs without cgo (CPU only; asking for a GPU says it was not compiled in)"
CGO_ENABLED=0 go build ./...
CGO_ENABLED=0 go vet ./device/ ./tensor/
CGO_ENABLED=0 TESSERA_REQUIRE_GPU= go test -count=1 -timeout 10m ./device/ ./tensor/

echo "== distributed without cgo (under mpirun, Init says MPI is unavailable and how to get it)"
CGO_ENABLED=0 go vet ./distributed/
CGO_ENABLED=0 TESSERA_REQUIRE_GPU= go test -count=1 -timeout 5m ./distributed/

echo "== layering: cpu, device and kernels/wgsl import nothing from $module but internal/layout and internal/gcpace"
# The leaves share one piece of the module: internal/layout, the layout
# arithmetic (strides, contiguity, 0-d promotion), which itself imports
# nothing from the module. Their tests may also use internal/approx (the
# tolerance model) and internal/devtest/gpuleaf; those are test imports,
# which this check does not read. ci/dupcheck_test.go fails when a layout
# or comparison helper is defined outside those two packages.
for pkg in internal/layout internal/approx internal/gcpace internal/memlimit; do
	if go list -f '{{join .Imports "\n"}}' "./$pkg" | grep "^$module/"; then
		echo "$pkg must import nothing from $module"
		exit 1
	fi
done
for pkg in cpu device kernels/wgsl; do
	[ -d "$pkg" ] || continue
	if go list -f '{{join .Imports "\n"}}' "./$pkg" | grep "^$module/" | grep -v "^$module/internal/\(layout\|gcpace\)$"; then
		echo "$pkg must stay a leaf package (only $module/internal/layout and internal/gcpace are allowed)"
		exit 1
	fi
done
if go list -f '{{join .Imports "\n"}}' ./tensor | grep -q "^$module/autograd"; then
	echo "tensor must not import autograd"
	exit 1
fi

echo "== file size: no .go file, tests included, over 500 lines"
big=$(git ls-files '*.go' | xargs wc -l | awk '$2 != "total" && $1 > 500')
if [ -n "$big" ]; then
	echo "$big"
	exit 1
fi

echo "== go test"
# The log is kept and searched: a "fatal error" (the Go runtime's
# unrecoverable out-of-memory, a concurrent map write) fails CI even in
# a child process whose parent test passed.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
go test -count=1 -timeout 25m ./... 2>&1 | tee "$log"
if grep -n "^fatal error" "$log"; then
	echo "a test log holds a Go runtime fatal error"
	exit 1
fi

echo "== goroutines under the race detector (independent loops, concurrent release)"
go test -race -count=1 -timeout 10m -run 'Concurrent|Context' ./tensor/ ./ddp/
