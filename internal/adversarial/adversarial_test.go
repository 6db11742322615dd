package adversarial

import (
	"errors"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/tensor"
)

// TestExports: functions, constructors and methods of exported types,
// nothing unexported.
func TestExports(t *testing.T) {
	got, err := Exports("testdata/pkg")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"F", "NewT", "T.M"}; !slices.Equal(got, want) {
		t.Errorf("Exports = %v, want %v", got, want)
	}
}

// TestMissing: the names Complete would report, for a missing export
// and for a case naming none.
func TestMissing(t *testing.T) {
	noop := One(func() {})
	for _, c := range []struct {
		cases         []Case
		missing, gone []string
	}{
		{[]Case{C("F", noop), C("NewT", noop), C("T.M", noop)}, nil, nil},
		{[]Case{C("F", noop), C("NewT", noop)}, []string{"T.M"}, nil},
		{[]Case{C("F", noop), C("NewT", noop), C("T.M", noop), C("T.Gone", noop)}, nil, []string{"T.Gone"}},
	} {
		missing, gone, err := Missing("testdata/pkg", c.cases)
		if err != nil || !slices.Equal(missing, c.missing) || !slices.Equal(gone, c.gone) {
			t.Errorf("Missing = %v, %v, %v; want %v, %v", missing, gone, err, c.missing, c.gone)
		}
	}
}

// TestOutcome: a return and a *tensor.Error are clean; a runtime panic
// and a panic with another value are not.
func TestOutcome(t *testing.T) {
	if e, bad := Outcome(func() {}); e != nil || bad != nil {
		t.Errorf("a return gave %v, %v", e, bad)
	}
	if e, bad := Outcome(func() { tensor.Ones([]int{2}).Reshape(3) }); e == nil || bad != nil {
		t.Errorf("a *tensor.Error gave %v, %v", e, bad)
	}
	var m map[string]int
	if _, bad := Outcome(func() { m["x"]++ }); bad == nil {
		t.Error("a runtime panic passed")
	}
	if _, bad := Outcome(func() { panic(errors.New("x")) }); bad == nil {
		t.Error("a panic with a plain error passed")
	}
}
