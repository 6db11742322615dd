package bench

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tessera-ml/tessera/tools/bench/peers"
)

// PeerInfo is what the peer script reports about its interpreter,
// libraries, BLAS, threads and CUDA device.
type PeerInfo struct {
	Python           string              `json:"python"`
	PythonVersion    string              `json:"python_version"`
	Torch            string              `json:"torch"`
	NumPy            string              `json:"numpy"`
	Threads          int                 `json:"threads"` // torch.get_num_threads()
	RequestedThreads int                 `json:"requested_threads"`
	TorchBLAS        string              `json:"torch_blas"`      // openblas, mkl, blis, reference, unknown
	TorchBLASInfo    string              `json:"torch_blas_info"` // BLAS_INFO of torch.__config__.show()
	NumPyBLAS        string              `json:"numpy_blas"`
	BLASLibraries    []string            `json:"blas_libraries"` // BLAS/LAPACK libraries loaded into the process
	TorchConfig      string              `json:"torch_config"`
	NumPyConfig      string              `json:"numpy_config"`
	Env              map[string]string   `json:"env"`
	CUDA             *CUDAInfo           `json:"cuda"`
	Workloads        map[string][]string `json:"workloads"` // peer → workload names it implements
}

// CUDAInfo describes the CUDA device PyTorch sees.
type CUDAInfo struct {
	Device      string `json:"device"`
	Capability  string `json:"capability"`
	MemoryBytes int64  `json:"memory_bytes"`
	CUDA        string `json:"cuda"`
	Driver      string `json:"driver"`
}

// Memory is a peak memory figure and what it measures: "gpu-peak" (the
// Tessera GPU allocator's peak allocated bytes), "go-heap-peak" (Go heap
// objects, which include the tensor package's pooled CPU buffers, sampled
// every millisecond), "rss-peak-growth" (a peer's resident-set high-water
// mark above its resident set before setup) or "cuda-peak" (PyTorch's
// CUDA allocator peak). All are taken over setup and two warm-up steps.
type Memory struct {
	Bytes int64  `json:"bytes"`
	Kind  string `json:"kind"`
}

// peerRequest asks the script to time one case.
type peerRequest struct {
	Workload string  `json:"workload"`
	Peer     string  `json:"peer"`
	Device   string  `json:"device"`
	Dims     []int   `json:"dims"`
	MinTime  float64 `json:"min_time"`
	MinIters int     `json:"min_iters"`
}

// peerResponse is the script's answer: the time for iters steps, the
// memory on a case's first request, or an error.
type peerResponse struct {
	Seconds float64 `json:"seconds"`
	Iters   int     `json:"iters"`
	Memory  *Memory `json:"memory"`
	Error   string  `json:"error"`
}

// peerProc is a running peer script.
type peerProc struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *tail
	dir    string
	info   PeerInfo
	waited sync.Once
}

// startPeer writes the peer script to a temporary directory and starts it
// with python, threads threads for torch and OpenBLAS (unless the
// environment already sets OPENBLAS_NUM_THREADS), and reads its info.
func startPeer(python string, threads int) (*peerProc, error) {
	dir, err := os.MkdirTemp("", "tessera-peers-")
	if err != nil {
		return nil, err
	}
	script := filepath.Join(dir, "peers.py")
	if err := os.WriteFile(script, peers.Script, 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	p := &peerProc{dir: dir, stderr: &tail{max: 4096}}
	p.cmd = exec.Command(python, script, "--threads", strconv.Itoa(threads))
	// OpenBLAS chooses its kernels for the running CPU unless
	// OPENBLAS_CORETYPE forces older ones (this machine's environment
	// sets Haswell, which halves PyTorch's GEMM on an AVX-512 CPU); the
	// peers run with the CPU's own, so ratios are against PyTorch at its
	// best. The report prints the setting the peer ran with.
	p.cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "OPENBLAS_CORETYPE=") })
	if _, ok := os.LookupEnv("OPENBLAS_NUM_THREADS"); !ok {
		p.cmd.Env = append(p.cmd.Env, "OPENBLAS_NUM_THREADS="+strconv.Itoa(threads))
	}
	p.cmd.Stderr = p.stderr
	if p.in, err = p.cmd.StdinPipe(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	p.out = bufio.NewReaderSize(stdout, 1<<16)
	if err := p.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting the PyTorch peers with %s: %w (set --python to an interpreter with torch and numpy)", python, err)
	}
	if err := p.read(&p.info); err != nil {
		p.close()
		return nil, fmt.Errorf("the PyTorch peers (%s) did not start: %w", python, err)
	}
	return p, nil
}

// read decodes the script's next line into v.
func (p *peerProc) read(v any) error {
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		p.wait() // stderr is copied in full only once the process is waited for
		return fmt.Errorf("peer script exited (%v): %s", err, p.stderr.String())
	}
	if err := json.Unmarshal(line, v); err != nil {
		return fmt.Errorf("peer script sent %q: %v", strings.TrimSpace(string(line)), err)
	}
	return nil
}

// run times one case. An error is a broken script; a case that failed
// inside the script (an exception) comes back in the response's Error.
func (p *peerProc) run(req peerRequest) (peerResponse, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return peerResponse{}, err
	}
	if _, err := p.in.Write(append(b, '\n')); err != nil {
		return peerResponse{}, fmt.Errorf("peer script exited: %s", p.stderr.String())
	}
	var r peerResponse
	err = p.read(&r)
	return r, err
}

// close ends the script and removes its directory.
func (p *peerProc) close() {
	p.in.Close()
	p.wait()
	os.RemoveAll(p.dir)
}

// wait waits for the script to exit, once.
func (p *peerProc) wait() { p.waited.Do(func() { p.cmd.Wait() }) }

// supports reports whether the script implements workload for peer.
func (p *peerProc) supports(peer, workload string) bool {
	return slices.Contains(p.info.Workloads[peer], workload)
}

// tail keeps the last max bytes written to it (a process's stderr, for
// error messages).
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// errReferenceBLAS is the refusal to compare against a reference BLAS.
var errReferenceBLAS = errors.New("reference BLAS")
