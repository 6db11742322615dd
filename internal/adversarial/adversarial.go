// Package adversarial is the harness of the adversarial-argument tests
// of packages tensor, nn, optim and nested: it reads a package's exported API
// with go/doc, checks that a case list names every export and nothing
// else, and runs each case requiring that it returns or panics with a
// *tensor.Error, within a time limit. A raw runtime panic, a panic with
// any other value, or a hang fails the test.
package adversarial

import (
	"errors"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tessera-ml/tessera/tensor"
)

// A Case is the adversarial calls of one export. Export names it as
// go/doc lists it: "Func" for a function (constructors included) and
// "Type.Method" for a method. Calls makes each call through try, with a
// description of its arguments.
type Case struct {
	Export string
	Calls  func(try Try)
}

// Try runs one adversarial call f, described by args.
type Try func(args string, f func())

// One is a Case body of a single call.
func One(f func()) func(Try) { return func(try Try) { try("", f) } }

// Limit is how long one case may run before it counts as a hang.
const Limit = 60 * time.Second

// Exports returns the exported functions and methods of the package in
// dir (test files excluded), as "Func" and "Type.Method", sorted. Methods
// promoted from embedded unexported types count as the type's own, as
// go/doc shows them.
func Exports(dir string) ([]string, error) {
	fset := token.NewFileSet()
	notTest := func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }
	pkgs, err := parser.ParseDir(fset, dir, notTest, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for name, p := range pkgs {
		if strings.HasSuffix(name, "_test") {
			continue
		}
		for _, f := range p.Files {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("adversarial: no Go files in %s", dir)
	}
	p, err := doc.NewFromFiles(fset, files, "adversarial/"+dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, f := range p.Funcs {
		names = append(names, f.Name)
	}
	for _, t := range p.Types {
		for _, f := range t.Funcs {
			names = append(names, f.Name)
		}
		for _, m := range t.Methods {
			names = append(names, t.Name+"."+m.Name)
		}
	}
	slices.Sort(names)
	return names, nil
}

// Missing returns the exports of the package in dir that no case names,
// and the case names that are not exports.
func Missing(dir string, cases []Case) (missing, gone []string, err error) {
	exports, err := Exports(dir)
	if err != nil {
		return nil, nil, err
	}
	covered := map[string]bool{}
	for _, c := range cases {
		if _, ok := slices.BinarySearch(exports, c.Export); !ok && !covered[c.Export] {
			gone = append(gone, c.Export)
		}
		covered[c.Export] = true
	}
	for _, e := range exports {
		if !covered[e] {
			missing = append(missing, e)
		}
	}
	return missing, gone, nil
}

// Complete fails t unless cases name every export of the package in dir
// at least once and name nothing that is not an export.
func Complete(t *testing.T, dir string, cases []Case) {
	t.Helper()
	missing, gone, err := Missing(dir, cases)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range missing {
		t.Errorf("%s exports %s, which has no adversarial case: add one", dir, e)
	}
	for _, e := range gone {
		t.Errorf("case for %q, which %s does not export", e, dir)
	}
}

// Outcome runs f and returns nil when it returned, the *tensor.Error
// when it panicked with one, and an error describing anything else: a
// panic with another value (a runtime error included, with its stack) or
// no return within Limit.
func Outcome(f func()) (terr *tensor.Error, bad error) {
	done := make(chan error, 1)
	var got *tensor.Error
	go func() {
		defer func() {
			r := recover()
			if r == nil {
				done <- nil
				return
			}
			if e, ok := r.(*tensor.Error); ok {
				got = e
				done <- nil
				return
			}
			done <- fmt.Errorf("panic with %T: %v\n%s", r, r, debug.Stack())
		}()
		f()
	}()
	select {
	case err := <-done:
		return got, err
	case <-time.After(Limit):
		return nil, errors.New("no return within " + Limit.String())
	}
}

// Run checks that cases are Complete for dir and makes every call of
// every case, failing t for each call that neither returns nor panics
// with a *tensor.Error. gpu is the GPU the argument helpers put one
// tensor on, when ok.
func Run(t *testing.T, dir string, gpu tensor.Device, ok bool, cases []Case) {
	t.Helper()
	Complete(t, dir, cases)
	env.gpu, env.hasGPU = gpu, ok
	// The calls draw from the default generator; leave it as it was, so
	// that tests running after this one see the same random numbers.
	seed, offset := tensor.DefaultGenerator().State()
	defer tensor.DefaultGenerator().SetState(seed, offset)
	calls := 0
	for _, c := range cases {
		start := time.Now()
		c.Calls(func(args string, f func()) {
			calls++
			if _, bad := Outcome(f); bad != nil {
				t.Errorf("%s(%s): %v", c.Export, args, bad)
			}
		})
		if d := time.Since(start); d > time.Second {
			t.Logf("%s: slow cases, %v", c.Export, d.Round(time.Millisecond))
		}
	}
	t.Logf("%d exports, %d calls", len(cases), calls)
}

// C returns the Case of export with calls.
func C(export string, calls func(Try)) Case { return Case{Export: export, Calls: calls} }
