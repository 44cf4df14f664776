package safetensors

import (
	"errors"
	"fmt"
	"math"
	"unicode/utf8"
)

// Tensor is one named tensor of a safetensors file.
//
// Data holds the elements in row-major order as a slice whose Go type matches
// Dtype: []float32 for F32, []float64 for F64, []int32 for I32, []int64 for
// I64 and []uint8 for U8. Its length must equal the product of Shape (1 for a
// scalar, whose Shape is empty). A Tensor refers to its slices; it does not
// copy them.
type Tensor struct {
	Name  string
	Dtype Dtype
	Shape []int
	Data  any
}

// New returns a tensor whose Dtype is the one that stores E.
func New[E Element](name string, shape []int, data []E) Tensor {
	return Tensor{Name: name, Dtype: DtypeOf[E](), Shape: shape, Data: data}
}

// Data returns t's elements as []E, or an error naming t when its Dtype or
// Data does not hold elements of type E.
func Data[E Element](t Tensor) ([]E, error) {
	want := DtypeOf[E]()
	if t.Dtype != want {
		return nil, fmt.Errorf("safetensors: tensor %q has dtype %s, want %s", t.Name, t.Dtype, want)
	}
	data, ok := t.Data.([]E)
	if !ok {
		return nil, fmt.Errorf("safetensors: tensor %q: dtype %s but Data is %T", t.Name, t.Dtype, t.Data)
	}
	return data, nil
}

// maxBytes bounds the byte size of one tensor so that sizes and offsets
// never overflow an int64.
const maxBytes = math.MaxInt64 / 8

// numElements returns the product of shape, or an error when a dimension is
// negative or the product is too large to address.
func numElements(shape []int) (int, error) {
	n := 1
	for _, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("shape %v has a negative dimension", shape)
		}
		if d != 0 && n > maxBytes/d {
			return 0, fmt.Errorf("shape %v has too many elements", shape)
		}
		n *= d
	}
	return n, nil
}

// dataLen returns the length of t.Data, or -1 when its Go type does not match
// t.Dtype.
func dataLen(t Tensor) int {
	switch d := t.Data.(type) {
	case []float32:
		if t.Dtype == F32 {
			return len(d)
		}
	case []float64:
		if t.Dtype == F64 {
			return len(d)
		}
	case []int32:
		if t.Dtype == I32 {
			return len(d)
		}
	case []int64:
		if t.Dtype == I64 {
			return len(d)
		}
	case []uint8:
		if t.Dtype == U8 {
			return len(d)
		}
	}
	return -1
}

// validate reports the first problem that keeps t from being written.
func (t Tensor) validate() error {
	if err := validName(t.Name); err != nil {
		return err
	}
	if t.Dtype.Size() == 0 {
		return fmt.Errorf("tensor %q: unsupported dtype %q (supported: %s)", t.Name, t.Dtype, supportedDtypes)
	}
	n, err := numElements(t.Shape)
	if err != nil {
		return fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	got := dataLen(t)
	if got < 0 {
		return fmt.Errorf("tensor %q: dtype %s but Data is %T", t.Name, t.Dtype, t.Data)
	}
	if got != n {
		return fmt.Errorf("tensor %q: shape %v needs %d elements, Data has %d", t.Name, t.Shape, n, got)
	}
	if n > maxBytes/t.Dtype.Size() {
		return fmt.Errorf("tensor %q: too large", t.Name)
	}
	return nil
}

// metadataKey is the header key that holds the file's metadata.
const metadataKey = "__metadata__"

// validName reports whether name can name a tensor.
func validName(name string) error {
	switch {
	case name == "":
		return errors.New("tensor with an empty name")
	case name == metadataKey:
		return fmt.Errorf("tensor name %q is reserved for metadata", name)
	case !utf8.ValidString(name):
		return fmt.Errorf("tensor name %q is not valid UTF-8", name)
	}
	return nil
}
