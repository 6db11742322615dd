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

typedef struct {
	int bits;
	long iters;
	float sink;
} job;

// The accumulators' sum goes to a memory sink, so that the loop is not
// dead code.
__attribute__((target("avx512f,fma"))) static void loopZ(job *j) {
	__m512 x = _mm512_set1_ps(1e-7f), y = _mm512_set1_ps(0.999f);
	__m512 a0 = Z(0), a1 = Z(1), a2 = Z(2), a3 = Z(3), a4 = Z(4), a5 = Z(5), a6 = Z(6), a7 = Z(7);
	__m512 a8 = Z(8), a9 = Z(9), a10 = Z(10), a11 = Z(11), a12 = Z(12), a13 = Z(13), a14 = Z(14), a15 = Z(15);
	for (long i = 0; i < j->iters; i++) {
		STEP4(_mm512_fmadd_ps, a0, a1, a2, a3)
		STEP4(_mm512_fmadd_ps, a4, a5, a6, a7)
		STEP4(_mm512_fmadd_ps, a8, a9, a10, a11)
		STEP4(_mm512_fmadd_ps, a12, a13, a14, a15)
	}
	__m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
		_mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
	s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)),
		_mm512_add_ps(_mm512_add_ps(a12, a13), _mm512_add_ps(a14, a15))));
	j->sink = _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"))) static void loopY(job *j) {
	__m256 x = _mm256_set1_ps(1e-7f), y = _mm256_set1_ps(0.999f);
	__m256 a0 = Y(0), a1 = Y(1), a2 = Y(2), a3 = Y(3), a4 = Y(4), a5 = Y(5);
	__m256 a6 = Y(6), a7 = Y(7), a8 = Y(8), a9 = Y(9), a10 = Y(10), a11 = Y(11);
	for (long i = 0; i < j->iters; i++) {
		STEP4(_mm256_fmadd_ps, a0, a1, a2, a3)
		STEP4(_mm256_fmadd_ps, a4, a5, a6, a7)
		STEP4(_mm256_fmadd_ps, a8, a9, a10, a11)
	}
	__m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
		_mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
	s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
	float f[8];
	_mm256_storeu_ps(f, s);
	j->sink = f[0] + f[1] + f[2] + f[3] + f[4] + f[5] + f[6] + f[7];
}

static void *run(void *p) {
	job *j = p;
	if (j->bits == 512) {
		loopZ(j);
	} else {
		loopY(j);
	}
	return NULL;
}

double fmaref_run(int bits, int threads, long iters) {
	pthread_t th[FMAREF_MAX_THREADS];
	job jobs[FMAREF_MAX_THREADS];
	struct timespec t0, t1;
	int started = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < threads; i++) {
		jobs[i] = (job){.bits = bits, .iters = iters};
		if (pthread_create(&th[i], NULL, run, &jobs[i]) != 0) {
			break;
		}
		started++;
	}
	for (int i = 0; i < started; i++) {
		pthread_join(th[i], NULL);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (started < threads) {
		return -1;
	}
	return (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
}
