package tensor

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// opCaseAllowed lists the non-test files outside op.go and opmath.go
// where an op constant may pick behaviour, each with its reason.
var opCaseAllowed = map[string]string{
	"../autograd/rules.go":             "the rule table is keyed by op by design",
	"../autograd/rules_conv.go":        "the rule table is keyed by op by design",
	"../autograd/rules_attention.go":   "the rule table is keyed by op by design",
	"../autograd/rules_elementwise.go": "the rule table is keyed by op by design",
	"../autograd/rules_reduce.go":      "the rule table is keyed by op by design",
	"../autograd/rules_shape.go":       "the rule table is keyed by op by design",
}

// TestNoOpSpecialCases fails when code in package tensor or autograd
// special-cases an op by name outside its row (op.go, opmath.go):
// compares an Op constant (==, !=, <, ...), uses one as a switch case, or
// keys a table by one. What an op is belongs in its row, which the
// backends read; a method naming the op it runs (x.unary(OpExp)) is fine.
func TestNoOpSpecialCases(t *testing.T) {
	ops := opConstants(t)
	for _, dir := range []string{".", "../autograd"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			base := filepath.Base(path)
			if strings.HasSuffix(base, "_test.go") || dir == "." && (base == "op.go" || base == "opmath.go") {
				continue
			}
			if _, ok := opCaseAllowed[filepath.ToSlash(path)]; ok {
				continue
			}
			for _, hit := range opCases(t, path, ops) {
				t.Errorf("%s: op %s is special-cased outside its row: put what the op is in op.go", hit.pos, hit.op)
			}
		}
	}
	for path := range opCaseAllowed {
		if _, err := os.Stat(path); err != nil {
			t.Errorf("allow-list entry %s: %v", path, err)
		}
	}
}

// opConstants returns the names of the Op constants declared in op.go.
func opConstants(t *testing.T) map[string]bool {
	f, err := parser.ParseFile(token.NewFileSet(), "op.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]bool{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		typed := false
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); ok {
				typed = id.Name == "Op"
			}
			for _, n := range v.Names {
				if typed && strings.HasPrefix(n.Name, "Op") {
					ops[n.Name] = true
				}
			}
		}
	}
	if !ops["OpNeg"] || !ops["OpScatterAdd"] {
		t.Fatalf("found no Op constants in op.go: %v", ops)
	}
	return ops
}

type opCase struct {
	pos token.Position
	op  string
}

// opCases returns where the file at path compares, switches on or keys
// a table by an Op constant (OpX in package tensor, tensor.OpX outside).
func opCases(t *testing.T, path string, ops map[string]bool) []opCase {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	opName := func(e ast.Expr) string {
		switch e := e.(type) {
		case *ast.Ident:
			if ops[e.Name] {
				return e.Name
			}
		case *ast.SelectorExpr:
			if x, ok := e.X.(*ast.Ident); ok && x.Name == "tensor" && ops[e.Sel.Name] {
				return e.Sel.Name
			}
		}
		return ""
	}
	var hits []opCase
	add := func(e ast.Expr) {
		if name := opName(e); name != "" {
			hits = append(hits, opCase{fset.Position(e.Pos()), name})
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			switch n.Op {
			case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
				add(n.X)
				add(n.Y)
			}
		case *ast.CaseClause:
			for _, e := range n.List {
				add(e)
			}
		case *ast.KeyValueExpr:
			add(n.Key)
		}
		return true
	})
	return hits
}
