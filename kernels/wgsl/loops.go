package wgsl

import (
	"fmt"
	"math/bits"
)

// Loop trips. lavapipe, Mesa's llvmpipe Vulkan driver (the CI adapter,
// and what TESSERA_DEVICE=gpu opens on a machine without a GPU), ends the
// loops of a shader invocation after 65535 iterations
// (LP_MAX_TGSI_LOOP_ITERATIONS): one counter per invocation, taken at
// every loop's back edge, nested and sequential loops alike, and what the
// invocation computes after that is silently wrong. It runs invocations
// as SIMD vectors (8 lanes at 256 bits) that share the counter, so a
// vector pays for its longest lane, and a loop pays one trip more for the
// pass that exits it: loops of n₁, n₂, ... iterations cost (n₁+1) +
// (n₂+1) + ... (TestLoopLimitGPU measures this).
//
// So every kernel bounds what one invocation's loops cost by
// Limits.MaxLoopTrips (DefaultMaxLoopTrips on every adapter, so that
// results do not depend on which adapter runs), and the planners split
// work whose loops would cost more: more segments per row for reductions,
// arg-reductions and softmax (a later pass combines them in a fixed
// order), a chunked scan for CumSum, one dispatch per range of the index
// for scatters and per range of K (and of batches) for matmul. Each loop
// in the templates states its bound as a function of the shape; the cost
// functions below are those bounds.

// DefaultMaxLoopTrips is the default Limits.MaxLoopTrips: lavapipe's
// LP_MAX_TGSI_LOOP_ITERATIONS.
const DefaultMaxLoopTrips = 65535

// trips is what a loop of n iterations costs: n, and the pass that exits.
func trips(n int) int { return n + 1 }

// treeTrips is what wg_tree (and argreduce's tree) costs over wg
// invocations: log2(wg) halvings.
func treeTrips(wg int) int { return trips(bits.Len(uint(wg)) - 1) }

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// rowWG is the workgroup size of a kernel over rows: 256 invocations with
// one per row (serial), else one workgroup per row (or segment) of 64, or
// 256 for segments of 2048 elements or more.
func rowWG(serial bool, seglen int, lim Limits) int {
	if serial || seglen >= 2048 {
		return lim.wgSize(256)
	}
	return lim.wgSize(64)
}

// rowTrips is what an invocation of a row kernel costs that visits the
// seglen elements of its segment once: a loop over them (serial), or a
// loop strided by the workgroup and the tree that combines the
// invocations' values.
func rowTrips(serial bool, seglen int, lim Limits) int {
	if serial {
		return trips(seglen)
	}
	wg := rowWG(false, seglen, lim)
	return trips(ceilDiv(seglen, wg)) + treeTrips(wg)
}

// segments splits n ≥ 1 elements into segs runs of seglen = ⌈n/segs⌉ (the
// last one shorter), with segs ≥ from, such that cost(seglen, segs) ≤
// lim.MaxLoopTrips: from itself when that fits, else the first fit of a
// search that grows segs by about 1/16 at a time. Without a fit up to n
// segments it fails, naming what.
func segments(what string, n, from int, cost func(seglen, segs int) int, lim Limits) (seglen, segs int, err error) {
	for try := max(1, min(from, n)); try <= n; try = max(try+1, try+try/16) {
		seglen = ceilDiv(n, try)
		segs = ceilDiv(n, seglen) // the fewest segments of that length
		if cost(seglen, segs) <= lim.MaxLoopTrips {
			return seglen, segs, nil
		}
	}
	return 0, 0, fmt.Errorf("wgsl: %s: rows of %d elements cannot be split to cost at most %d loop trips per invocation", what, n, lim.MaxLoopTrips)
}

// withinTrips fails, naming what, when a kernel's cost exceeds the limit.
func withinTrips(what string, cost int, lim Limits) error {
	if cost > lim.MaxLoopTrips {
		return fmt.Errorf("wgsl: %s: %d loop trips per invocation exceed the limit of %d", what, cost, lim.MaxLoopTrips)
	}
	return nil
}

// spans splits [0, n) into consecutive ranges of at most step elements
// (one empty range when n is 0).
func spans(n, step int) [][2]int {
	out := [][2]int{{0, min(n, step)}}
	for e := out[0][1]; e < n; e += step {
		out = append(out, [2]int{e, min(n, e+step)})
	}
	return out
}
