//go:build !cgo || !unix

package distributed

import "runtime"

// cgoEnabled reports whether this build can load MPI.
const cgoEnabled = false

// openMPI fails: loading libmpi at run time takes cgo and dlopen.
func openMPI(l launch) (transport, error) {
	why := "this program was built without cgo (CGO_ENABLED=0), and Tessera loads Open MPI's libmpi.so.40 " +
		"through cgo at run time; rebuild with CGO_ENABLED=1 and a C compiler"
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		why = "Tessera loads Open MPI with dlopen, which " + runtime.GOOS + " does not have; run on Linux or macOS"
	}
	return nil, errorf("Init", l.rank, ErrUnavailable, "launched by mpirun (%s=%d), but %s, "+
		"and install Open MPI 4.1: apt-get install libopenmpi-dev openmpi-bin", envSize, l.size, why)
}

// abortMPI has no MPI to abort: Init never succeeds under mpirun here.
func abortMPI(int) {}
