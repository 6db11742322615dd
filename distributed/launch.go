package distributed

import (
	"strconv"
)

// A launch is what the launcher's environment says about this process.
type launch struct {
	mpi                  bool // started by Open MPI's mpirun (or mpiexec, orterun)
	rank, size           int
	localRank, localSize int
}

// Open MPI's mpirun sets these in every process it starts (Open MPI 4.1,
// "Environment variables" in mpirun(1)).
const (
	envSize      = "OMPI_COMM_WORLD_SIZE"
	envRank      = "OMPI_COMM_WORLD_RANK"
	envLocalRank = "OMPI_COMM_WORLD_LOCAL_RANK"
	envLocalSize = "OMPI_COMM_WORLD_LOCAL_SIZE"
)

// detectLaunch reads the launcher's variables through getenv. Without
// any it returns a world of one. Open MPI's variables that do not parse,
// and other launchers' (MPICH and Intel MPI's Hydra set PMI_SIZE; a PMIx
// launcher such as srun --mpi=pmix sets PMIX_RANK without Open MPI's
// variables), are an ErrLauncher: those processes would otherwise each
// run alone and silently train unrelated models.
func detectLaunch(getenv func(string) string) (launch, error) {
	l := launch{size: 1, localSize: 1}
	if getenv(envSize) == "" {
		if v := getenv("PMI_SIZE"); v != "" && v != "1" {
			return l, errorf("Init", 0, ErrLauncher, "PMI_SIZE=%s: this process was started by an MPI launcher "+
				"other than Open MPI's (MPICH or Intel MPI mpiexec?); launch with Open MPI's mpirun "+
				"(apt-get install libopenmpi-dev openmpi-bin)", v)
		}
		if v := getenv("PMIX_RANK"); v != "" {
			return l, errorf("Init", 0, ErrLauncher, "PMIX_RANK=%s without %s: this process was started by a "+
				"PMIx launcher other than Open MPI's mpirun (srun --mpi=pmix?); launch with Open MPI's mpirun", v, envSize)
		}
		return l, nil
	}
	l.mpi = true
	var err error
	read := func(name string, lo, hi int) int {
		if err != nil {
			return 0
		}
		s := getenv(name)
		n, perr := strconv.Atoi(s)
		if perr != nil || n < lo || n > hi {
			err = errorf("Init", 0, ErrLauncher, "%s=%q: want an integer in [%d, %d] (Open MPI's mpirun sets it)", name, s, lo, hi)
		}
		return n
	}
	const maxRanks = 1 << 30
	l.size = read(envSize, 1, maxRanks)
	l.rank = read(envRank, 0, l.size-1)
	l.localSize = read(envLocalSize, 1, l.size)
	l.localRank = read(envLocalRank, 0, l.localSize-1)
	if err != nil {
		err.(*Error).Rank = l.rank
	}
	return l, err
}
