//go:build !cgo

package distributed

// cgoEnabled reports whether this build can load MPI.
const cgoEnabled = false

// openMPI fails: loading libmpi at run time takes cgo (dlopen).
func openMPI(l launch) (transport, error) {
	return nil, errorf("Init", l.rank, ErrUnavailable, "launched by mpirun (%s=%d), but this program was built "+
		"without cgo (CGO_ENABLED=0), and Tessera loads Open MPI's libmpi.so.40 through cgo; rebuild with "+
		"CGO_ENABLED=1 and a C compiler, and install Open MPI 4.1: apt-get install libopenmpi-dev openmpi-bin", envSize, l.size)
}

// abortMPI has no MPI to abort: Init never succeeds under mpirun here.
func abortMPI(int) {}
