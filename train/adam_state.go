package train

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"lipformer/safetensors"
)

// Names under which Adam's state is stored in a checkpoint: the first and
// second moments of parameter NAME are the 1-D tensors "adam.m.NAME" and
// "adam.v.NAME", and the step count is the metadata value "adam.step".
const (
	AdamFirstMomentPrefix  = "adam.m."
	AdamSecondMomentPrefix = "adam.v."
	AdamStepKey            = "adam.step"
)

// State returns the optimizer state: the moments of every parameter as 1-D
// tensors of T's dtype, in parameter order, and the step count as metadata.
// Together with the parameter values it is all that is needed to continue
// training bit for bit. The tensors view the optimizer's moments, which the
// next Step or LoadState changes: a checkpoint writes them before that,
// without a copy of twice the parameters' size (docs/runs.md, "Memory").
func (a *Adam[T]) State() ([]safetensors.Tensor, map[string]string) {
	tensors := make([]safetensors.Tensor, 0, 2*len(a.params))
	for i, p := range a.params {
		shape := []int{len(p.Value)}
		tensors = append(tensors,
			safetensors.New(AdamFirstMomentPrefix+p.Name, shape, a.m[i]),
			safetensors.New(AdamSecondMomentPrefix+p.Name, shape, a.v[i]))
	}
	return tensors, map[string]string{AdamStepKey: strconv.Itoa(a.steps)}
}

// LoadState replaces the optimizer state with one exported by State, for the
// same parameters. Tensors without an Adam prefix (model weights stored in
// the same checkpoint) are ignored. It fails, leaving the optimizer as it
// was, when the step count is missing or invalid, a parameter's moment is
// missing or has the wrong dtype or shape, or a moment belongs to no
// parameter; the error names the parameter.
func (a *Adam[T]) LoadState(tensors []safetensors.Tensor, metadata map[string]string) error {
	steps, err := strconv.Atoi(metadata[AdamStepKey])
	if err != nil || steps < 0 {
		return fmt.Errorf("adam: state has no valid step count %q under %q", metadata[AdamStepKey], AdamStepKey)
	}
	byName := make(map[string]safetensors.Tensor, len(tensors))
	for _, t := range tensors {
		if strings.HasPrefix(t.Name, AdamFirstMomentPrefix) || strings.HasPrefix(t.Name, AdamSecondMomentPrefix) {
			byName[t.Name] = t
		}
	}
	m := make([][]T, len(a.params))
	v := make([][]T, len(a.params))
	for i, p := range a.params {
		if m[i], err = momentData[T](byName, AdamFirstMomentPrefix, p); err != nil {
			return err
		}
		if v[i], err = momentData[T](byName, AdamSecondMomentPrefix, p); err != nil {
			return err
		}
		delete(byName, AdamFirstMomentPrefix+p.Name)
		delete(byName, AdamSecondMomentPrefix+p.Name)
	}
	if len(byName) > 0 {
		name := slices.Min(slices.Collect(maps.Keys(byName)))
		return fmt.Errorf("adam: state tensor %q belongs to no parameter of this optimizer", name)
	}
	for i := range a.params {
		copy(a.m[i], m[i])
		copy(a.v[i], v[i])
	}
	a.steps = steps
	return nil
}

// momentData returns the data of parameter p's moment stored under prefix,
// checked against p's length and T's dtype.
func momentData[T Float](byName map[string]safetensors.Tensor, prefix string, p Param[T]) ([]T, error) {
	name := prefix + p.Name
	t, ok := byName[name]
	if !ok {
		return nil, fmt.Errorf("adam: state has no %q for parameter %q", name, p.Name)
	}
	if len(t.Shape) != 1 || t.Shape[0] != len(p.Value) {
		return nil, fmt.Errorf("adam: state %q has shape %v, parameter %q needs [%d]", name, t.Shape, p.Name, len(p.Value))
	}
	data, err := safetensors.Data[T](t)
	if err != nil {
		return nil, fmt.Errorf("adam: parameter %q: %w", p.Name, err)
	}
	if len(data) != len(p.Value) {
		return nil, fmt.Errorf("adam: state %q has %d elements, parameter %q needs %d", name, len(data), p.Name, len(p.Value))
	}
	return data, nil
}
