package wgsl

import (
	"fmt"
	"strings"
)

// Helpers are the prelude functions an elementwise expression may call,
// besides WGSL's built-ins: isnan_ and isinf_ (bit tests, which survive
// the fast-math folding that turns x != x into false on lavapipe),
// log1p, log_ and tanh_ (log and tanh with small relative errors near 1
// and 0, where lavapipe's are poor), erf_ (f32 only) and pow_ (f32, or
// i32 when the kernel's scalar type is i32).
var Helpers = []string{"isnan_", "isinf_", "log1p", "log_", "tanh_", "erf_", "pow_"}

// prelude returns the helper functions expr calls, for scalar type st.
func prelude(expr, st string) (string, error) {
	uses := func(name string) bool { return strings.Contains(expr, name+"(") }
	var names []string
	pow := uses("pow_")
	if uses("isnan_") || (pow && st == F32) {
		names = append(names, "isnan_")
	}
	if uses("isinf_") || (pow && st == F32) {
		names = append(names, "isinf_")
	}
	if uses("log1p") || uses("log_") {
		names = append(names, "log1p")
	}
	if uses("log_") {
		names = append(names, "log_")
	}
	if uses("tanh_") {
		names = append(names, "tanh_")
	}
	if uses("erf_") {
		names = append(names, "erf_")
	}
	if pow {
		names = append(names, "pow_"+st)
	}
	var b strings.Builder
	for _, n := range names {
		if err := templates.ExecuteTemplate(&b, n, nil); err != nil {
			return "", fmt.Errorf("wgsl: prelude %s: %w", n, err)
		}
	}
	return b.String(), nil
}

// mustPrelude renders named helpers for the fixed kernels (reduce,
// softmax), where a failure is a bug.
func mustPrelude(names ...string) string {
	var b strings.Builder
	for _, n := range names {
		if err := templates.ExecuteTemplate(&b, n, nil); err != nil {
			panic(err)
		}
	}
	return b.String()
}
