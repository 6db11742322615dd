package bench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// referenceBLAS reports whether PyTorch or NumPy loaded a reference
// (netlib) BLAS, and which libraries.
func (i *PeerInfo) referenceBLAS() bool {
	return i.TorchBLAS == "reference" || i.NumPyBLAS == "reference"
}

// openBLASPackage is Debian's threaded OpenBLAS, which takes over the
// libblas.so.3 alternative that Debian's PyTorch and NumPy load.
const openBLASPackage = "libopenblas0-pthread"

// system runs the commands that inspect and install Debian packages;
// tests replace it.
type system struct {
	lookPath func(name string) (string, error)
	run      func(log io.Writer, env []string, name string, args ...string) error
	root     bool
}

var host = system{
	lookPath: exec.LookPath,
	run: func(log io.Writer, env []string, name string, args ...string) error {
		cmd := exec.Command(name, args...)
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdout, cmd.Stderr = log, log
		return cmd.Run()
	},
	root: os.Geteuid() == 0,
}

// installOpenBLAS installs libopenblas0-pthread with apt-get (through
// `sudo -n` when not root), as ci/test.sh installs lavapipe, after
// checking with dpkg that it is missing. It returns why it could not.
func (s system) installOpenBLAS(log io.Writer) error {
	if _, err := s.lookPath("dpkg"); err != nil {
		return errors.New("this is not a Debian system (no dpkg), so Tessera cannot install OpenBLAS for it")
	}
	if s.run(io.Discard, nil, "dpkg", "-s", openBLASPackage) == nil {
		return fmt.Errorf("%s is installed, but the libblas.so.3 alternative does not point at it (see update-alternatives --display libblas.so.3-x86_64-linux-gnu)", openBLASPackage)
	}
	apt := []string{"apt-get"}
	if !s.root {
		apt = []string{"sudo", "-n", "apt-get"}
	}
	fmt.Fprintf(log, "bench: PyTorch loaded Debian's reference BLAS; installing %s (%s install)\n", openBLASPackage, strings.Join(apt, " "))
	env := []string{"DEBIAN_FRONTEND=noninteractive"}
	install := append(apt[1:len(apt):len(apt)], "install", "-y", "-q", openBLASPackage)
	if s.run(log, env, apt[0], install...) == nil {
		return nil
	}
	update := append(apt[1:len(apt):len(apt)], "update", "-q")
	if err := s.run(log, env, apt[0], update...); err != nil {
		return fmt.Errorf("%s update failed (%v)", strings.Join(apt, " "), err)
	}
	if err := s.run(log, env, apt[0], install...); err != nil {
		return fmt.Errorf("%s install %s failed (%v)", strings.Join(apt, " "), openBLASPackage, err)
	}
	return nil
}

// startPeers starts the peer script and makes sure neither PyTorch nor
// NumPy runs on a reference BLAS: it installs OpenBLAS when they do and
// restarts the script, and refuses (an error wrapping errReferenceBLAS)
// when that is not possible, because ratios against a BLAS several times
// slower than OpenBLAS would mislead.
func startPeers(s system, python string, threads int, log io.Writer) (*peerProc, error) {
	p, err := startPeer(python, threads)
	if err != nil || !p.info.referenceBLAS() {
		return p, err
	}
	libs := strings.Join(p.info.BLASLibraries, ", ")
	p.close()
	if err := s.installOpenBLAS(log); err != nil {
		return nil, refusal(libs, err)
	}
	if p, err = startPeer(python, threads); err != nil {
		return nil, err
	}
	if p.info.referenceBLAS() {
		p.close()
		return nil, refusal(strings.Join(p.info.BLASLibraries, ", "), fmt.Errorf("%s was installed, yet the reference BLAS is still loaded", openBLASPackage))
	}
	return p, nil
}

func refusal(libs string, why error) error {
	return fmt.Errorf("%w: PyTorch and NumPy load Debian's reference BLAS (%s), several times slower than OpenBLAS, so no ratios against them are printed; %v; install %s (apt-get install %[4]s) or run without --torch",
		errReferenceBLAS, libs, why, openBLASPackage)
}
