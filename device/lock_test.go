//go:build cgo

package device

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestLockDiscipline checks the locking rule of the package doc ("Locking")
// on the package's source, as compiled with cgo:
//
//   - every method of *GPU is exported or named …Locked, and its receiver
//     is g;
//   - a function holds GPU.mu when it is a *GPU method named …Locked, an
//     exported *GPU method that calls g.mu.Lock(), a method of one of the
//     GPU's concerns (the types of the fields that mu guards, and the
//     types that are part of them), or a function documented "Callers
//     hold GPU.mu";
//   - only functions that hold GPU.mu touch a guarded field (g.<field
//     declared after mu>, and the mutable fields of Buffers and blocks),
//     call a …Locked method or call a method of a concern through g
//     (except Open, which builds the GPU before anything else sees it);
//   - only exported *GPU methods take the lock: nothing that is called
//     with it held locks it again.
func TestLockDiscipline(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(pkg.Dir, name), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	guarded, concerns := gpuGuardedFields(t, files)
	// Types that are part of a concern without being a field of GPU.
	for _, name := range []string{"cmdLog", "loggedCmd", "driverBuffers"} {
		concerns[name] = true
	}
	// Mutable fields of Buffer and block, guarded by their GPU's mu.
	elemGuarded := map[string]bool{"freed": true, "failed": true, "lastUse": true, "bgKeys": true, "state": true, "raw": true}

	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			recv, recvName := receiver(fd)
			name := fd.Name.Name
			where := fset.Position(fd.Pos()).String() + " " + name
			locks := callsLock(fd.Body)
			holds := false
			switch {
			case recv == "GPU":
				if recvName != "g" {
					t.Errorf("%s: the receiver of a *GPU method is named g, not %q", where, recvName)
				}
				if !ast.IsExported(name) && !strings.HasSuffix(name, "Locked") {
					t.Errorf("%s: an unexported *GPU method is named …Locked", where)
				}
				holds = strings.HasSuffix(name, "Locked") || locks
				if strings.HasSuffix(name, "Locked") && locks {
					t.Errorf("%s: a …Locked method takes g.mu again", where)
				}
			case concerns[recv]:
				holds = true
				if locks {
					t.Errorf("%s: a method of a GPU concern takes a lock", where)
				}
			case fd.Doc != nil && strings.Contains(fd.Doc.Text(), "Callers hold GPU.mu"):
				holds = true
			case recv == "" && name == "Open":
				holds = true
			}
			if holds {
				continue
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SelectorExpr:
					if id, ok := n.X.(*ast.Ident); ok && id.Name == "g" && guarded[n.Sel.Name] {
						t.Errorf("%s: touches g.%s without holding g.mu", where, n.Sel.Name)
					}
					if elemGuarded[n.Sel.Name] {
						t.Errorf("%s: touches .%s (guarded by GPU.mu) without holding it", where, n.Sel.Name)
					}
				case *ast.CallExpr:
					if sel, ok := n.Fun.(*ast.SelectorExpr); ok && strings.HasSuffix(sel.Sel.Name, "Locked") {
						t.Errorf("%s: calls %s without holding g.mu", where, sel.Sel.Name)
					}
				}
				return true
			})
		}
	}
}

// gpuGuardedFields returns the fields that GPU declares after mu, and the
// names of their types (the GPU's concerns).
func gpuGuardedFields(t *testing.T, files []*ast.File) (fields, types map[string]bool) {
	fields, types = map[string]bool{}, map[string]bool{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || ts.Name.Name != "GPU" {
				return true
			}
			after := false
			for _, fl := range ts.Type.(*ast.StructType).Fields.List {
				for _, id := range fl.Names {
					if after {
						fields[id.Name] = true
					}
					after = after || id.Name == "mu"
				}
				if after {
					typ := fl.Type
					if st, ok := typ.(*ast.StarExpr); ok {
						typ = st.X
					}
					if id, ok := typ.(*ast.Ident); ok && !ast.IsExported(id.Name) && id.Name != "bool" {
						types[id.Name] = true
					}
				}
			}
			return false
		})
	}
	if !fields["stream"] || !fields["alloc"] || !types["stream"] || !types["allocator"] {
		t.Fatalf("did not find GPU's guarded fields: %v, types %v", fields, types)
	}
	return fields, types
}

// receiver returns the receiver's type name (without *) and variable name.
func receiver(fd *ast.FuncDecl) (typ, name string) {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return "", ""
	}
	r := fd.Recv.List[0]
	x := r.Type
	if st, ok := x.(*ast.StarExpr); ok {
		x = st.X
	}
	if id, ok := x.(*ast.Ident); ok {
		typ = id.Name
	}
	if len(r.Names) > 0 {
		name = r.Names[0].Name
	}
	return typ, name
}

// callsLock reports whether body calls <x>.mu.Lock().
func callsLock(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Lock" {
			if inner, ok := sel.X.(*ast.SelectorExpr); ok && inner.Sel.Name == "mu" {
				found = true
			}
		}
		return !found
	})
	return found
}
