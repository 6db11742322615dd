//go:build cgo && linux

package device

// Under an address-space limit (ulimit -v, RLIMIT_AS), glibc's malloc
// reserves 64 MiB of address space for each thread arena it makes, and
// the Vulkan driver's and wgpu's threads make several: on lavapipe under
// a 2 GiB limit those reservations, never touched, took 384 MiB of it,
// leaving the CPU budget (which is what the limit leaves) almost
// nothing. Before main runs, and only under such a limit and when
// MALLOC_ARENA_MAX does not say otherwise, this caps the arenas at two.

/*
#include <stdlib.h>
#include <sys/resource.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

static int tesseraArenaMax = 0;

__attribute__((constructor)) static void tesseraLimitArenas(void) {
#if defined(__GLIBC__) && defined(M_ARENA_MAX)
	struct rlimit r;
	if (getenv("MALLOC_ARENA_MAX") != NULL) return;
	if (getrlimit(RLIMIT_AS, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return;
	if (mallopt(M_ARENA_MAX, 2) == 1) tesseraArenaMax = 2;
#endif
}

static int tesseraArenaLimit(void) { return tesseraArenaMax; }
*/
import "C"

// MallocArenaLimit returns the number of malloc arenas the package capped
// glibc at before main ran (2, under an address-space limit without
// MALLOC_ARENA_MAX), or 0 when it left malloc alone.
func MallocArenaLimit() int { return int(C.tesseraArenaLimit()) }
