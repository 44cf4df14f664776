package model

import (
	"fmt"
	"lipformer/spec"

	"gorgonia.org/tensor"
)

// WithDtype returns a copy of the model whose parameters and buffers have the element type
// dtype, values converted: inversion diagnostics of a float32 model
// run in float64, so that what they measure is the model, not rounding.
func (m *Model) WithDtype(dtype spec.Dtype) (*Model, error) {
	cfg := m.Cfg
	cfg.Dtype = dtype
	c, err := New(cfg, 0)
	if err != nil {
		return nil, err
	}
	src, dst := m.stored(), c.stored()
	for i, s := range src {
		if err := convertInto(dst[i].value, s.value); err != nil {
			return nil, fmt.Errorf("model: %s: %w", s.name, err)
		}
	}
	return c, nil
}

// convertInto copies src into dst, of the same shape, converting the element type.
func convertInto(dst, src *tensor.Dense) error {
	if !dst.Shape().Eq(src.Shape()) {
		return fmt.Errorf("shape %v, want %v", src.Shape(), dst.Shape())
	}
	switch d := dst.Data().(type) {
	case []float64:
		switch s := src.Data().(type) {
		case []float64:
			copy(d, s)
		case []float32:
			for i, v := range s {
				d[i] = float64(v)
			}
		}
	case []float32:
		switch s := src.Data().(type) {
		case []float32:
			copy(d, s)
		case []float64:
			for i, v := range s {
				d[i] = float32(v)
			}
		}
	}
	return nil
}
