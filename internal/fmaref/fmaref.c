//go:build amd64 && cgo

// fmaref.c: the hand-written C reference for cpu.FMAPeak (see fmaref.go).
// Each thread runs independent FMA chains acc = acc·y + x, one variable
// per chain, spelled out so that the compiler keeps them in registers;
// acc tends to x/(1-y) = 1e-4 and stays a normal float.

#include <immintrin.h>
#include <pthread.h>
#include <time.h>

#include "fmaref.h"

#define STEP4(f, a, b, c, d) \
	a = f(a, y, x);      \
	b = f(b, y, x);      \
	c = f(c, y, x);      \
	d = f(d, y, x);

// Z(i) and Y(i) start chain i at i+1: chains that started equal would
// be one chain to the compiler, which merges them.
#define Z(i) _mm512_set1_ps((i) + 1)
#define Y(i) _mm256_set1_ps((i) + 1)

// A job is the work of one fmaref_run: total iterations, which the
// threads take CHUNK at a time, as cpu.FMAPeak's goroutines do.
typedef struct {
	int bits;
	long total, taken;
} job;

// A worker is one thread's view of the job: the sum of its accumulators
// goes to sink, so that the loop is not dead code, and share is the CPU
// time the thread had over the wall time it ran.
typedef struct {
	job *job;
	float sink;
	double share;
} worker;

#define CHUNK (1L << 13)

// take returns the iterations of the thread's next chunk, 0 when none
// is left.
static long take(job *j) {
	long start = __atomic_fetch_add(&j->taken, CHUNK, __ATOMIC_RELAXED);
	if (start >= j->total) {
		return 0;
	}
	return j->total - start < CHUNK ? j->total - start : CHUNK;
}

__attribute__((target("avx512f,fma"))) static void loopZ(worker *w) {
	__m512 x = _mm512_set1_ps(1e-7f), y = _mm512_set1_ps(0.999f);
	__m512 a0 = Z(0), a1 = Z(1), a2 = Z(2), a3 = Z(3), a4 = Z(4), a5 = Z(5), a6 = Z(6), a7 = Z(7);
	__m512 a8 = Z(8), a9 = Z(9), a10 = Z(10), a11 = Z(11), a12 = Z(12), a13 = Z(13), a14 = Z(14), a15 = Z(15);
	for (long n; (n = take(w->job)) > 0;) {
		for (long i = 0; i < n; i++) {
			STEP4(_mm512_fmadd_ps, a0, a1, a2, a3)
			STEP4(_mm512_fmadd_ps, a4, a5, a6, a7)
			STEP4(_mm512_fmadd_ps, a8, a9, a10, a11)
			STEP4(_mm512_fmadd_ps, a12, a13, a14, a15)
		}
	}
	__m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
		_mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
	s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)),
		_mm512_add_ps(_mm512_add_ps(a12, a13), _mm512_add_ps(a14, a15))));
	w->sink = _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"))) static void loopY(worker *w) {
	__m256 x = _mm256_set1_ps(1e-7f), y = _mm256_set1_ps(0.999f);
	__m256 a0 = Y(0), a1 = Y(1), a2 = Y(2), a3 = Y(3), a4 = Y(4), a5 = Y(5);
	__m256 a6 = Y(6), a7 = Y(7), a8 = Y(8), a9 = Y(9), a10 = Y(10), a11 = Y(11);
	for (long n; (n = take(w->job)) > 0;) {
		for (long i = 0; i < n; i++) {
			STEP4(_mm256_fmadd_ps, a0, a1, a2, a3)
			STEP4(_mm256_fmadd_ps, a4, a5, a6, a7)
			STEP4(_mm256_fmadd_ps, a8, a9, a10, a11)
		}
	}
	__m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
		_mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
	s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
	float f[8];
	_mm256_storeu_ps(f, s);
	w->sink = f[0] + f[1] + f[2] + f[3] + f[4] + f[5] + f[6] + f[7];
}

static double seconds(clockid_t c) {
	struct timespec t;
	clock_gettime(c, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *run(void *p) {
	worker *w = p;
	double wall = seconds(CLOCK_MONOTONIC), cpu = seconds(CLOCK_THREAD_CPUTIME_ID);
	if (w->job->bits == 512) {
		loopZ(w);
	} else {
		loopY(w);
	}
	wall = seconds(CLOCK_MONOTONIC) - wall;
	w->share = wall > 0 ? (seconds(CLOCK_THREAD_CPUTIME_ID) - cpu) / wall : 1;
	return NULL;
}

double fmaref_run(int bits, int threads, long iters, double *share) {
	pthread_t th[FMAREF_MAX_THREADS];
	worker ws[FMAREF_MAX_THREADS];
	job j = {.bits = bits, .total = threads * iters};
	int started = 0;
	double t0 = seconds(CLOCK_MONOTONIC);
	for (int i = 0; i < threads; i++) {
		ws[i] = (worker){.job = &j};
		if (pthread_create(&th[i], NULL, run, &ws[i]) != 0) {
			break;
		}
		started++;
	}
	*share = 1;
	for (int i = 0; i < started; i++) {
		pthread_join(th[i], NULL);
		*share = ws[i].share < *share ? ws[i].share : *share;
	}
	double t = seconds(CLOCK_MONOTONIC) - t0;
	return started < threads ? -1 : t;
}
