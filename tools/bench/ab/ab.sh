#!/usr/bin/env bash
# ab.sh compares two commits of Tessera with tessera bench, built side by
# side and run interleaved in one sitting (old, new, old, new, ...), so
# that both see the same machine load; it prints the medians and the
# ratio of the new build's time to the old one's per workload.
#
#	tools/bench/ab/ab.sh OLD_REV [NEW_REV] [ROUNDS] [bench flags...]
#	tools/bench/ab/ab.sh b8e15a2 HEAD 5 -quick -devices cpu
set -euo pipefail
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
old=$1 new=${2:-HEAD} rounds=${3:-5}
shift $(($# < 3 ? $# : 3))
work=$(mktemp -d)
trap 'git worktree remove --force "$work/old-src" 2>/dev/null; git worktree remove --force "$work/new-src" 2>/dev/null; rm -rf "$work"' EXIT
for side in old new; do
	rev=${!side}
	git worktree add -q --detach "$work/$side-src" "$rev"
	(cd "$work/$side-src" && go build -o "$work/$side" ./cmd/tessera)
done
go build -o "$work/abcompare" ./tools/bench/ab
oldf="" newf=""
for r in $(seq "$rounds"); do
	for side in old new; do
		"$work/$side" bench -rounds 1 -progress=false -out "$work/$side-$r" "$@" >/dev/null
	done
	oldf+="${oldf:+,}$work/old-$r/bench.json" newf+="${newf:+,}$work/new-$r/bench.json"
done
echo "old $(git rev-parse --short "$old"), new $(git rev-parse --short "$new"), $rounds interleaved rounds, load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$work/abcompare" -old "$oldf" -new "$newf"
