// fmaref.h declares the C reference loop of package fmaref.

// FMAREF_MAX_THREADS bounds fmaref_run's threads.
#define FMAREF_MAX_THREADS 256

// fmaref_run runs threads·iters iterations of the FMA chains of the given
// width (512: 16 chains of __m512, else 12 of __m256) on threads POSIX
// threads, which take them in chunks, and returns the wall-clock seconds
// from before the first thread starts to after the last is joined, or -1
// when a thread could not be started. *share is set to the least, over
// the threads, of a thread's CPU time over the wall time it ran.
double fmaref_run(int bits, int threads, long iters, double *share);
