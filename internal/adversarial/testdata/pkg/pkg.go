// Package pkg is a fixture for the adversarial harness's own test.
package pkg

// F is an exported function.
func F() {}

// T is an exported type.
type T struct{}

// NewT is T's constructor.
func NewT() *T { return &T{} }

// M is an exported method.
func (*T) M() {}

func (*T) unexported() {}
