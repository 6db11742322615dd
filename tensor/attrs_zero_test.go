package tensor

import (
	"reflect"
	"testing"
)

// TestAttrsZeroSeesEveryField sets each field of Attrs in turn and wants
// Attrs.zero to notice it: a field it missed would make record share
// the zero Attrs and lose that argument.
func TestAttrsZeroSeesEveryField(t *testing.T) {
	var a Attrs
	if !a.zero() {
		t.Fatal("the zero Attrs is not zero")
	}
	v := reflect.ValueOf(&a).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		b := Attrs{}
		bf := reflect.ValueOf(&b).Elem().Field(i)
		switch f.Kind() {
		case reflect.Slice:
			bf.Set(reflect.MakeSlice(f.Type(), 0, 0))
		case reflect.Int:
			bf.SetInt(1)
		case reflect.Bool:
			bf.SetBool(true)
		case reflect.Uint8:
			bf.SetUint(1)
		case reflect.Pointer:
			bf.Set(reflect.New(f.Type().Elem()))
		case reflect.Struct:
			bf.Field(0).Index(0).SetInt(1)
		default:
			t.Fatalf("field %s has a kind (%v) this test does not set", v.Type().Field(i).Name, f.Kind())
		}
		if b.zero() {
			t.Errorf("Attrs.zero misses field %s", v.Type().Field(i).Name)
		}
	}
}
