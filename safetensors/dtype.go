package safetensors

// Dtype names the element type of a tensor as spelled in a safetensors header.
type Dtype string

// The dtypes this package reads and writes, with the Go element type that
// holds each in Tensor.Data.
const (
	F32 Dtype = "F32" // []float32
	F64 Dtype = "F64" // []float64
	I32 Dtype = "I32" // []int32
	I64 Dtype = "I64" // []int64
	U8  Dtype = "U8"  // []uint8
)

// supportedDtypes lists the supported dtypes for error messages.
const supportedDtypes = "F32, F64, I32, I64, U8"

// Size returns the number of bytes of one element, or 0 for a dtype this
// package does not support.
func (d Dtype) Size() int {
	switch d {
	case F32, I32:
		return 4
	case F64, I64:
		return 8
	case U8:
		return 1
	}
	return 0
}

// Element is the set of Go element types a Tensor's Data can hold.
type Element interface {
	float32 | float64 | int32 | int64 | uint8
}

// DtypeOf returns the dtype that stores elements of type E.
func DtypeOf[E Element]() Dtype {
	var zero E
	switch any(zero).(type) {
	case float32:
		return F32
	case float64:
		return F64
	case int32:
		return I32
	case int64:
		return I64
	default:
		return U8
	}
}
