package model

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"gorgonia.org/tensor"

	"lipformer/safetensors"
)

// Metadata keys of a checkpoint file. A checkpoint is one safetensors file: the model's
// parameters under their names, any extra tensors (optimizer state), and string metadata
// holding the config (JSON), the vocabulary (JSON array of byte values) and whatever the
// caller adds. It is readable from Python with the safetensors package or numpy.
const (
	MetaFormat = "lipformer.format"
	MetaConfig = "lipformer.config"
	MetaVocab  = "lipformer.vocab"
	format     = "1"
)

// Checkpoint is what a checkpoint file holds besides the model's weights.
type Checkpoint struct {
	Vocab []byte               // the byte of each token id
	Extra []safetensors.Tensor // tensors that are not model parameters
	Meta  map[string]string    // all metadata, including the config and vocabulary
}

// Save writes the model (parameters and buffers) with its vocabulary, extra tensors and
// metadata to path atomically: a crash leaves the previous file or the new one, never half
// of one.
func (m *Model) Save(path string, vocab []byte, extra []safetensors.Tensor, meta map[string]string) error {
	if len(vocab) != m.Cfg.Vocab {
		return fmt.Errorf("save %s: vocabulary of %d bytes for a model of %d tokens", path, len(vocab), m.Cfg.Vocab)
	}
	cfg, err := json.Marshal(m.Cfg)
	if err != nil {
		return err
	}
	ids := make([]int, len(vocab))
	for i, b := range vocab {
		ids[i] = int(b)
	}
	voc, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	all := map[string]string{MetaFormat: format, MetaConfig: string(cfg), MetaVocab: string(voc)}
	for k, v := range meta {
		all[k] = v
	}
	stored := m.stored()
	ts := make([]safetensors.Tensor, 0, len(extra)+len(stored))
	for _, s := range stored {
		ts = append(ts, tensorOf(s.name, s.value))
	}
	ts = append(ts, extra...)
	return safetensors.WriteFile(path, ts, all)
}

// storedTensor is a named tensor of the model that checkpoints hold.
type storedTensor struct {
	name  string
	value *tensor.Dense
}

// stored lists the parameters and then the buffers, in checkpoint order.
func (m *Model) stored() []storedTensor {
	var s []storedTensor
	for _, p := range m.Params() {
		s = append(s, storedTensor{p.Name, p.Value})
	}
	for _, b := range m.Buffers() {
		s = append(s, storedTensor{b.Name, b.Value})
	}
	return s
}

// tensorOf views a dense tensor as a safetensors tensor, without copying.
func tensorOf(name string, d *tensor.Dense) safetensors.Tensor {
	shape := []int(d.Shape().Clone())
	switch v := d.Data().(type) {
	case []float32:
		return safetensors.New(name, shape, v)
	default:
		return safetensors.New(name, shape, v.([]float64))
	}
}

// Load reads a checkpoint written by Save and rebuilds its model.
func Load(path string) (*Model, *Checkpoint, error) {
	ts, meta, err := safetensors.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("load %s: %w", path, err)
	}
	if meta[MetaFormat] != format {
		return nil, nil, fmt.Errorf("load %s: not a lipformer checkpoint (metadata %s = %q, want %q)", path, MetaFormat, meta[MetaFormat], format)
	}
	var cfg Config
	if err := json.Unmarshal([]byte(meta[MetaConfig]), &cfg); err != nil {
		return nil, nil, fmt.Errorf("load %s: config: %w", path, err)
	}
	var ids []int
	if err := json.Unmarshal([]byte(meta[MetaVocab]), &ids); err != nil {
		return nil, nil, fmt.Errorf("load %s: vocabulary: %w", path, err)
	}
	vocab := make([]byte, len(ids))
	for i, id := range ids {
		if id < 0 || id > 255 {
			return nil, nil, fmt.Errorf("load %s: vocabulary entry %d is %d, not a byte", path, i, id)
		}
		vocab[i] = byte(id)
	}
	m, err := New(cfg, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("load %s: %w", path, err)
	}
	byName := make(map[string]safetensors.Tensor, len(ts))
	for _, t := range ts {
		byName[t.Name] = t
	}
	for _, s := range m.stored() {
		t, ok := byName[s.name]
		if !ok {
			return nil, nil, fmt.Errorf("load %s: tensor %s of the model is missing", path, s.name)
		}
		if err := copyInto(s.value, t); err != nil {
			return nil, nil, fmt.Errorf("load %s: %w", path, err)
		}
		delete(byName, s.name)
	}
	ck := &Checkpoint{Vocab: vocab, Meta: meta}
	for _, t := range ts {
		if _, ok := byName[t.Name]; ok {
			ck.Extra = append(ck.Extra, t)
		}
	}
	return m, ck, nil
}

// copyInto copies a stored tensor into a parameter of the same shape and dtype.
func copyInto(dst *tensor.Dense, t safetensors.Tensor) error {
	if !slices.Equal(t.Shape, []int(dst.Shape())) {
		return fmt.Errorf("tensor %s has shape %v, the model wants %v", t.Name, t.Shape, dst.Shape())
	}
	switch v := dst.Data().(type) {
	case []float32:
		src, err := safetensors.Data[float32](t)
		if err != nil {
			return err
		}
		copy(v, src)
	case []float64:
		src, err := safetensors.Data[float64](t)
		if err != nil {
			return err
		}
		copy(v, src)
	}
	return nil
}

// MetaInt reads an integer metadata entry, or returns an error naming it.
func (c *Checkpoint) MetaInt(key string) (int, error) {
	v, err := strconv.Atoi(c.Meta[key])
	if err != nil {
		return 0, fmt.Errorf("checkpoint metadata %s = %q: %w", key, c.Meta[key], err)
	}
	return v, nil
}
