package distributed

import (
	"errors"
	"strings"
	"testing"
)

// TestDetectLaunch checks what each launcher's environment gives.
func TestDetectLaunch(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want launch
		err  string // a part of the ErrLauncher message, "" for none
	}{
		{"none", nil, launch{size: 1, localSize: 1}, ""},
		{"mpirun", map[string]string{envSize: "4", envRank: "3", envLocalRank: "1", envLocalSize: "2"},
			launch{mpi: true, rank: 3, size: 4, localRank: 1, localSize: 2}, ""},
		{"np 1", map[string]string{envSize: "1", envRank: "0", envLocalRank: "0", envLocalSize: "1"},
			launch{mpi: true, size: 1, localSize: 1}, ""},
		{"rank past size", map[string]string{envSize: "2", envRank: "2", envLocalRank: "0", envLocalSize: "1"},
			launch{}, "OMPI_COMM_WORLD_RANK=\"2\""},
		{"no local rank", map[string]string{envSize: "2", envRank: "1", envLocalSize: "1"},
			launch{}, "OMPI_COMM_WORLD_LOCAL_RANK=\"\""},
		{"hydra", map[string]string{"PMI_SIZE": "4", "PMI_RANK": "1"}, launch{}, "PMI_SIZE=4"},
		{"hydra np 1", map[string]string{"PMI_SIZE": "1", "PMI_RANK": "0"}, launch{size: 1, localSize: 1}, ""},
		{"srun pmix", map[string]string{"PMIX_RANK": "0"}, launch{}, "PMIX_RANK=0"},
	}
	for _, tt := range tests {
		got, err := detectLaunch(func(k string) string { return tt.env[k] })
		if tt.err != "" {
			if !errors.Is(err, ErrLauncher) || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: error %v, want ErrLauncher naming %s", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
}

// TestInitUnavailable checks that a launch by mpirun in a build or on a
// machine that cannot load MPI is ErrUnavailable, saying how to get it.
// The launch is faked: MPI is never initialized (see unloadable).
func TestInitUnavailable(t *testing.T) {
	t.Setenv(envSize, "2")
	t.Setenv(envRank, "1")
	t.Setenv(envLocalRank, "1")
	t.Setenv(envLocalSize, "2")
	want := unloadable(t)
	g, err := Init()
	var e *Error
	if g != nil || !errors.Is(err, ErrUnavailable) || !errors.As(err, &e) || e.Op != "Init" || e.Rank != 1 {
		t.Fatalf("Init = %v, %v; want an *Error of Init on rank 1 wrapping ErrUnavailable", g, err)
	}
	for _, s := range append(want, "apt-get install libopenmpi-dev openmpi-bin") {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("Init's error %q does not say %q", err, s)
		}
	}
}
