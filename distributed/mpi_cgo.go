//go:build cgo && unix

package distributed

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>

// Open MPI is loaded at run time, so that a machine without it builds and
// runs every program as a world of one. Its handles (MPI_COMM_WORLD,
// MPI_FLOAT, MPI_SUM, ...) are the addresses of global objects in
// libmpi (OMPI_PREDEFINED_GLOBAL in Open MPI's mpi.h), found by dlsym
// like the functions; MPI_IN_PLACE and MPI_THREAD_FUNNELED are the
// values of Open MPI 4's mpi.h.
#define TSR_IN_PLACE ((void *) 1)
#define TSR_THREAD_FUNNELED 1
#define TSR_ERROR_STRING 512

typedef void *tsr_handle;

static struct {
	void *lib;
	int (*init_thread)(int *, char ***, int, int *);
	int (*comm_rank)(tsr_handle, int *);
	int (*comm_size)(tsr_handle, int *);
	int (*comm_set_errhandler)(tsr_handle, tsr_handle);
	int (*allreduce)(const void *, void *, int, tsr_handle, tsr_handle, tsr_handle);
	int (*bcast)(void *, int, tsr_handle, int, tsr_handle);
	int (*allgather)(const void *, int, tsr_handle, void *, int, tsr_handle, tsr_handle);
	int (*reduce_scatter_block)(const void *, void *, int, tsr_handle, tsr_handle, tsr_handle);
	int (*barrier)(tsr_handle);
	int (*finalize)(void);
	int (*abort)(tsr_handle, int);
	int (*error_string)(int, char *, int *);
	tsr_handle comm_world, errors_return;
	tsr_handle dtype[4]; // in elemKind's order
	tsr_handle op[3];    // sum, max, min
} tsr;

// tsr_open loads the library name with its symbols global (Open MPI's
// plugins, dlopened by libmpi, resolve against them) and looks up every
// function and handle. It returns NULL, or dlerror's message.
static const char *tsr_open(const char *name) {
	tsr.lib = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
	if (tsr.lib == NULL) {
		return dlerror();
	}
	struct { void **dst; const char *name; } syms[] = {
		{(void **)&tsr.init_thread, "MPI_Init_thread"},
		{(void **)&tsr.comm_rank, "MPI_Comm_rank"},
		{(void **)&tsr.comm_size, "MPI_Comm_size"},
		{(void **)&tsr.comm_set_errhandler, "MPI_Comm_set_errhandler"},
		{(void **)&tsr.allreduce, "MPI_Allreduce"},
		{(void **)&tsr.bcast, "MPI_Bcast"},
		{(void **)&tsr.allgather, "MPI_Allgather"},
		{(void **)&tsr.reduce_scatter_block, "MPI_Reduce_scatter_block"},
		{(void **)&tsr.barrier, "MPI_Barrier"},
		{(void **)&tsr.finalize, "MPI_Finalize"},
		{(void **)&tsr.abort, "MPI_Abort"},
		{(void **)&tsr.error_string, "MPI_Error_string"},
		{&tsr.comm_world, "ompi_mpi_comm_world"},
		{&tsr.errors_return, "ompi_mpi_errors_return"},
		{&tsr.dtype[0], "ompi_mpi_float"},
		{&tsr.dtype[1], "ompi_mpi_double"},
		{&tsr.dtype[2], "ompi_mpi_int"},
		{&tsr.dtype[3], "ompi_mpi_int64_t"},
		{&tsr.op[0], "ompi_mpi_op_sum"},
		{&tsr.op[1], "ompi_mpi_op_max"},
		{&tsr.op[2], "ompi_mpi_op_min"},
	};
	for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
		*syms[i].dst = dlsym(tsr.lib, syms[i].name);
		if (*syms[i].dst == NULL) {
			return dlerror();
		}
	}
	return NULL;
}

// tsr_init initializes MPI for calls from this thread only, makes errors
// on MPI_COMM_WORLD return codes instead of aborting, and reads the rank
// and size.
static int tsr_init(int *provided, int *rank, int *size) {
	int rc = tsr.init_thread(NULL, NULL, TSR_THREAD_FUNNELED, provided);
	if (rc == 0) rc = tsr.comm_set_errhandler(tsr.comm_world, tsr.errors_return);
	if (rc == 0) rc = tsr.comm_rank(tsr.comm_world, rank);
	if (rc == 0) rc = tsr.comm_size(tsr.comm_world, size);
	return rc;
}

static int tsr_allreduce(void *buf, int n, int dt, int op) {
	return tsr.allreduce(TSR_IN_PLACE, buf, n, tsr.dtype[dt], tsr.op[op], tsr.comm_world);
}

static int tsr_bcast(void *buf, int n, int dt, int root) {
	return tsr.bcast(buf, n, tsr.dtype[dt], root, tsr.comm_world);
}

// tsr_allgather gathers n elements from every rank into buf in place
// (the send count and type are ignored with MPI_IN_PLACE).
static int tsr_allgather(void *buf, int n, int dt) {
	return tsr.allgather(TSR_IN_PLACE, n, tsr.dtype[dt], buf, n, tsr.dtype[dt], tsr.comm_world);
}

// tsr_reduce_scatter reduces buf (n elements per rank, size parts) in
// place; this rank's part of the result lands in buf's first n elements.
static int tsr_reduce_scatter(void *buf, int n, int dt, int op) {
	return tsr.reduce_scatter_block(TSR_IN_PLACE, buf, n, tsr.dtype[dt], tsr.op[op], tsr.comm_world);
}

static int tsr_barrier(void) { return tsr.barrier(tsr.comm_world); }
static int tsr_finalize(void) { return tsr.finalize(); }
static void tsr_abort(int code) { tsr.abort(tsr.comm_world, code); }

static void tsr_error_string(int code, char *buf) {
	int n = 0;
	if (tsr.error_string(code, buf, &n) != 0 || n < 0 || n >= TSR_ERROR_STRING) {
		n = 0;
	}
	buf[n] = 0;
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// libName is Open MPI's library (soname version 40: Open MPI 3.0 and
// later; tested with 4.1); a variable so that a test can make loading it
// fail.
var libName = map[string]string{"darwin": "libmpi.40.dylib"}[runtime.GOOS]

func init() {
	if libName == "" {
		libName = "libmpi.so.40"
	}
}

// cgoEnabled reports whether this build can load MPI.
const cgoEnabled = true

// mpiOpen is set once MPI is initialized, for abortMPI.
var mpiOpen atomic.Bool

// An mpiTransport runs collectives on MPI_COMM_WORLD. Its methods are
// called on the thread that initialized MPI (MPI_THREAD_FUNNELED).
type mpiTransport struct{ size int }

// openMPI loads libmpi and initializes MPI on the calling thread, which
// the group's worker has locked.
func openMPI(l launch) (transport, error) {
	name := C.CString(libName)
	defer C.free(unsafe.Pointer(name))
	if msg := C.tsr_open(name); msg != nil {
		return nil, errorf("Init", l.rank, ErrUnavailable, "launched by mpirun (%s=%d), but Open MPI's %s does not load (%s); "+
			"install Open MPI 4.1: apt-get install libopenmpi-dev openmpi-bin", envSize, l.size, libName, C.GoString(msg))
	}
	var provided, rank, size C.int
	if rc := C.tsr_init(&provided, &rank, &size); rc != 0 {
		return nil, errorf("Init", l.rank, ErrMPI, "MPI_Init_thread: %s", mpiMessage(rc))
	}
	mpiOpen.Store(true)
	fail := func(cause error, format string, args ...any) (transport, error) {
		C.tsr_finalize()
		mpiOpen.Store(false)
		return nil, errorf("Init", l.rank, cause, format, args...)
	}
	if provided < C.TSR_THREAD_FUNNELED {
		return fail(ErrMPI, "MPI provides thread level %d; Tessera needs MPI_THREAD_FUNNELED (1)", int(provided))
	}
	if int(rank) != l.rank || int(size) != l.size {
		return fail(ErrLauncher, "MPI says rank %d of %d, the launcher's %s and %s say %d of %d",
			int(rank), int(size), envRank, envSize, l.rank, l.size)
	}
	return mpiTransport{size: int(size)}, nil
}

// abortMPI calls MPI_Abort when MPI is initialized; MPI_Abort may be
// called from any thread while the worker is inside a collective.
func abortMPI(code int) {
	if mpiOpen.Load() {
		C.tsr_abort(C.int(code))
	}
}

// mpiMessage returns MPI's message for the error code rc.
func mpiMessage(rc C.int) string {
	var buf [C.TSR_ERROR_STRING + 1]C.char
	C.tsr_error_string(rc, &buf[0])
	if msg := C.GoString(&buf[0]); msg != "" {
		return fmt.Sprintf("%s (MPI error %d)", msg, int(rc))
	}
	return fmt.Sprintf("MPI error %d", int(rc))
}

// mpiOps maps a ReduceOp to the C side's table of ops.
var mpiOps = [...]C.int{Sum: 0, Max: 1, Min: 2}

// chunk is the most elements one MPI call moves: counts are C ints.
const chunk = 1 << 30

// each calls f on b in pieces of at most chunk elements, and returns the
// first MPI error. An empty b makes no call: every rank has the same
// count (the descriptor says so), so every rank skips it.
func each(b hostBuf, name string, f func(p unsafe.Pointer, n C.int, dt C.int) C.int) error {
	n, p := b.len(), b.ptr()
	size := [...]int{kindFloat32: 4, kindFloat64: 8, kindInt32: 4, kindInt64: 8}[b.kind()]
	for off := 0; off < n; off += chunk {
		m := min(chunk, n-off)
		if rc := f(unsafe.Add(p, off*size), C.int(m), C.int(b.kind())); rc != 0 {
			return fmt.Errorf("%s: %s", name, mpiMessage(rc))
		}
	}
	return nil
}

func (mpiTransport) allReduce(b hostBuf, op ReduceOp) error {
	return each(b, "MPI_Allreduce", func(p unsafe.Pointer, n, dt C.int) C.int {
		return C.tsr_allreduce(p, n, dt, mpiOps[op])
	})
}

func (mpiTransport) broadcast(b hostBuf, root int) error {
	return each(b, "MPI_Bcast", func(p unsafe.Pointer, n, dt C.int) C.int {
		return C.tsr_bcast(p, n, dt, C.int(root))
	})
}

// allGather and reduceScatter move b in one call: the caller keeps one
// rank's part within a C int (maxCount).
func (m mpiTransport) allGather(b hostBuf) error {
	n := b.len() / m.size
	if n == 0 {
		return nil
	}
	if rc := C.tsr_allgather(b.ptr(), C.int(n), C.int(b.kind())); rc != 0 {
		return fmt.Errorf("MPI_Allgather: %s", mpiMessage(rc))
	}
	return nil
}

func (m mpiTransport) reduceScatter(b hostBuf, op ReduceOp) error {
	n := b.len() / m.size
	if n == 0 {
		return nil
	}
	if rc := C.tsr_reduce_scatter(b.ptr(), C.int(n), C.int(b.kind()), mpiOps[op]); rc != 0 {
		return fmt.Errorf("MPI_Reduce_scatter_block: %s", mpiMessage(rc))
	}
	return nil
}

func (mpiTransport) barrier() error {
	if rc := C.tsr_barrier(); rc != 0 {
		return fmt.Errorf("MPI_Barrier: %s", mpiMessage(rc))
	}
	return nil
}

func (mpiTransport) finalize() error {
	mpiOpen.Store(false)
	if rc := C.tsr_finalize(); rc != 0 {
		return fmt.Errorf("MPI_Finalize: %s", mpiMessage(rc))
	}
	return nil
}
