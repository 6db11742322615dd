package ci

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// layoutHelper and compareHelper match the names (lower-cased) under
// which layout arithmetic and tolerance comparisons were copied between
// packages before internal/layout and internal/approx held them: every
// function named near…, close…, approx… or almost…, and the others by
// name.
var (
	layoutHelper  = regexp.MustCompile(`^(numel|numelof|numelements|contiguousstrides|iscontiguous|one1d|promote0d)$`)
	compareHelper = regexp.MustCompile(`^(near|close|allclose|isclose|approx|almost)|^(expectclose|checkclose|checkf32|checkf64|checki32|maxrelerr|relerr|abserr|agrees|samefloats|samevalues|lengthtol|withintol)$`)
)

// homes are the only packages that may define those helpers.
var homes = []string{"internal/layout", "internal/approx"}

// TestNoDuplicateHelpers parses every .go file of the module, tests
// included, and fails when a function or method named like a layout or
// comparison helper is defined outside internal/layout and
// internal/approx, unless its body only returns a call into them (a
// method such as cpu.Layout.IsContiguous that exposes the shared
// arithmetic on a leaf's own type).
func TestNoDuplicateHelpers(t *testing.T) {
	root := ".."
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			for _, h := range homes {
				if rel == h {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			name := strings.ToLower(fn.Name.Name)
			kind := ""
			switch {
			case layoutHelper.MatchString(name):
				kind = "layout helper (internal/layout)"
			case compareHelper.MatchString(name) && fn.Recv == nil:
				kind = "comparison helper (internal/approx)"
			default:
				continue
			}
			if delegates(fn) {
				continue
			}
			t.Errorf("%s: %s is a %s defined outside its home: use the shared one", fset.Position(fn.Pos()), fn.Name.Name, kind)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// delegates reports whether fn's body is a single return of a call into
// internal/layout or internal/approx.
func delegates(fn *ast.FuncDecl) bool {
	if fn.Body == nil || len(fn.Body.List) != 1 {
		return false
	}
	ret, ok := fn.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return false
	}
	call, ok := ret.Results[0].(*ast.CallExpr)
	if !ok {
		return false
	}
	fun := call.Fun
	if ix, ok := fun.(*ast.IndexExpr); ok {
		fun = ix.X
	}
	sel, ok := fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && (pkg.Name == "layout" || pkg.Name == "approx")
}
