// fmaref.h declares the C reference loop of package fmaref.

// FMAREF_MAX_THREADS bounds fmaref_run's threads.
#define FMAREF_MAX_THREADS 256

// fmaref_run runs iters iterations of the FMA chains of the given width
// (512: 16 chains of __m512, else 12 of __m256) on each of threads POSIX
// threads and returns the wall-clock seconds from before the first
// thread starts to after the last is joined, or -1 when a thread could
// not be started.
double fmaref_run(int bits, int threads, long iters);
