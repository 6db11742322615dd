package cpu

// Float is the constraint of the floating-point element types.
type Float interface{ ~float32 | ~float64 }

// Number is the constraint of the element types that support arithmetic.
type Number interface{ ~float32 | ~float64 | ~int32 }

// Elem is the constraint of every element type a tensor can hold.
type Elem interface {
	~float32 | ~float64 | ~int32 | ~bool
}
