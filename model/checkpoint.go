package model

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"gorgonia.org/tensor"

	"lipformer/safetensors"
	"lipformer/spec"
)

// Metadata keys of a checkpoint file. A checkpoint is one safetensors file: the model's
// parameters under their names, any extra tensors (optimizer state), and string metadata
// holding the config (JSON), the vocabulary (JSON array of byte values), the checksum of
// every tensor and whatever the caller adds. It is readable from Python with the
// safetensors package or numpy.
const (
	MetaFormat = "lipformer.format"
	MetaConfig = "lipformer.config"
	MetaVocab  = "lipformer.vocab"
	// MetaChecksums holds a JSON object mapping the name of every tensor of the file to
	// the CRC-32C (Castagnoli) of its data bytes as 8 lower-case hex digits
	// (safetensors.Checksum). Files written before it existed have no such entry.
	MetaChecksums = "lipformer.crc32c"
	format        = "1"
)

// Checkpoint is what a checkpoint file holds besides the model's weights.
type Checkpoint struct {
	Vocab []byte               // the byte of each token id
	Extra []safetensors.Tensor // tensors that are not model parameters
	Meta  map[string]string    // all metadata, including the config and vocabulary
}

// Save writes the model (parameters and buffers) with its vocabulary, extra tensors and
// metadata to path atomically: a crash leaves the previous file or the new one, never half
// of one. The metadata gains the checksum of every tensor (MetaChecksums), replacing any
// entry of that name in meta.
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
	sums := make(map[string]string, len(ts))
	for _, t := range ts {
		sum, err := safetensors.Checksum(t)
		if err != nil {
			return fmt.Errorf("save %s: %w", path, err)
		}
		sums[t.Name] = fmt.Sprintf("%08x", sum)
	}
	js, err := json.Marshal(sums)
	if err != nil {
		return err
	}
	all[MetaChecksums] = string(js)
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

// Load reads a checkpoint written by Save and rebuilds its model. Before it allocates the
// model it checks the file against itself: the data of every tensor against its checksum
// (MetaChecksums; files without checksums are read unchecked), the vocabulary against the
// config's vocab, and the config against the stored tensors, so that a config claiming a
// vocab, width, context, hidden width, head count or depth the tensors do not have, or
// more parameters than the file stores values, is refused before the model it describes
// is allocated. Every weight must be finite. Errors name the file and the tensor or
// config field at fault.
func Load(path string) (*Model, *Checkpoint, error) {
	ts, meta, err := safetensors.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("load %s: %w", path, err)
	}
	if meta[MetaFormat] != format {
		return nil, nil, fmt.Errorf("load %s: not a lipformer checkpoint (metadata %s = %q, want %q)", path, MetaFormat, meta[MetaFormat], format)
	}
	if err := verifyChecksums(ts, meta); err != nil {
		return nil, nil, fmt.Errorf("load %s: %w", path, err)
	}
	var cfg Config
	if err := json.Unmarshal([]byte(meta[MetaConfig]), &cfg); err != nil {
		return nil, nil, fmt.Errorf("load %s: config: %w", path, err)
	}
	if err := cfg.Validate(); err != nil {
		return nil, nil, fmt.Errorf("load %s: %w", path, err)
	}
	var ids []int
	if err := json.Unmarshal([]byte(meta[MetaVocab]), &ids); err != nil {
		return nil, nil, fmt.Errorf("load %s: vocabulary: %w", path, err)
	}
	if len(ids) != cfg.Vocab {
		return nil, nil, fmt.Errorf("load %s: the vocabulary (metadata %s) lists %d bytes, but config vocab is %d tokens", path, MetaVocab, len(ids), cfg.Vocab)
	}
	vocab := make([]byte, len(ids))
	for i, id := range ids {
		if id < 0 || id > 255 {
			return nil, nil, fmt.Errorf("load %s: vocabulary entry %d is %d, not a byte", path, i, id)
		}
		vocab[i] = byte(id)
	}
	byName := make(map[string]safetensors.Tensor, len(ts))
	for _, t := range ts {
		byName[t.Name] = t
	}
	if err := checkSizes(cfg, byName); err != nil {
		return nil, nil, fmt.Errorf("load %s: %w", path, err)
	}
	m, err := New(cfg, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("load %s: %w", path, err)
	}
	if err := checkTensors(m, cfg, byName); err != nil {
		return nil, nil, fmt.Errorf("load %s: %w", path, err)
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

// verifyChecksums compares the data of every tensor with its checksum in the metadata,
// when the metadata has checksums.
func verifyChecksums(ts []safetensors.Tensor, meta map[string]string) error {
	raw, ok := meta[MetaChecksums]
	if !ok {
		return nil
	}
	var sums map[string]string
	if err := json.Unmarshal([]byte(raw), &sums); err != nil {
		return fmt.Errorf("metadata %s is not a JSON object of tensor names to checksums: %w", MetaChecksums, err)
	}
	for _, t := range ts {
		want, ok := sums[t.Name]
		if !ok {
			return fmt.Errorf("tensor %s has no checksum in metadata %s", t.Name, MetaChecksums)
		}
		got, err := safetensors.Checksum(t)
		if err != nil {
			return err
		}
		if fmt.Sprintf("%08x", got) != want {
			return fmt.Errorf("tensor %s is corrupt: the CRC-32C of its data is %08x, the checksum saved with it (metadata %s) is %s", t.Name, got, MetaChecksums, want)
		}
		delete(sums, t.Name)
	}
	if len(sums) > 0 {
		name := slices.Sorted(maps.Keys(sums))[0]
		return fmt.Errorf("metadata %s has a checksum for tensor %s, which the file does not hold", MetaChecksums, name)
	}
	return nil
}

// checkSizes checks the sizes cfg claims against the stored tensors that carry them, before
// the model is built, so that a config claiming more than the file holds is refused without
// allocating its model: tok (vocab, width), pos (context, width) and, in each of exactly
// cfg.Layers blocks, attn.wq (width, width) and mlp.fc.w (width, hidden), each of the
// config's dtype. Every other tensor of a model is at most as large as these times its
// heads (at most its width), so once they pass, the model is at most a few times the
// file; the model's own parameter list then decides the rest (checkTensors).
func checkSizes(cfg Config, byName map[string]safetensors.Tensor) error {
	d, v, t, hid := cfg.Width, cfg.TokenRows(), cfg.Context, cfg.HiddenWidth()
	sizes := []struct {
		name   string
		shape  []int
		fields string // the config fields that fix the shape, with their values
	}{
		{"tok", []int{v, d}, fmt.Sprintf("vocab %d, token bytes %d and width %d", cfg.Vocab, cfg.TokenBytes, d)},
		{"pos", []int{t, d}, fmt.Sprintf("context %d and width %d", t, d)},
	}
	for i := 0; i < cfg.Layers; i++ {
		wq := fmt.Sprintf("h%d.attn.wq", i)
		if _, ok := byName[wq]; !ok { // stops at the first missing block, however many are claimed
			return fmt.Errorf("config layers %d: the file holds no tensor %s", cfg.Layers, wq)
		}
		sizes = append(sizes,
			struct {
				name   string
				shape  []int
				fields string
			}{wq, []int{d, d}, fmt.Sprintf("width %d", d)},
			struct {
				name   string
				shape  []int
				fields string
			}{fmt.Sprintf("h%d.mlp.fc.w", i), []int{d, hid}, fmt.Sprintf("width %d and hidden %d", d, hid)})
	}
	if extra := fmt.Sprintf("h%d.attn.wq", cfg.Layers); hasTensor(byName, extra) {
		return fmt.Errorf("config layers %d: the file stores tensor %s of a further block", cfg.Layers, extra)
	}
	for _, want := range sizes {
		got, ok := byName[want.name]
		if !ok {
			return fmt.Errorf("config %s: the file holds no tensor %s (of shape %v)", want.fields, want.name, want.shape)
		}
		if !slices.Equal(got.Shape, want.shape) {
			return fmt.Errorf("config %s: tensor %s should have shape %v, but the file stores it with shape %v", want.fields, want.name, want.shape, got.Shape)
		}
		if dt := storedDtype(cfg.Dtype); got.Dtype != dt {
			return fmt.Errorf("config dtype %v: tensor %s should be %s, but the file stores it as %s", cfg.Dtype, want.name, dt, got.Dtype)
		}
	}
	return nil
}

// checkTensors checks the file's tensors against the model's parameter list: every
// tensor of the model stored with its shape and dtype, and no other tensor in the model's
// namespace (modelNamespace); extra tensors, such as the optimizer's state, are named apart.
func checkTensors(m *Model, cfg Config, byName map[string]safetensors.Tensor) error {
	dt := storedDtype(cfg.Dtype)
	model := map[string]bool{}
	for _, s := range m.stored() {
		model[s.name] = true
		got, ok := byName[s.name]
		if !ok {
			return fmt.Errorf("config %s: the model has tensor %s of shape %v, which the file does not hold", describe(cfg), s.name, s.value.Shape())
		}
		if !slices.Equal(got.Shape, []int(s.value.Shape())) {
			return fmt.Errorf("config %s: tensor %s should have shape %v, but the file stores it with shape %v", describe(cfg), s.name, s.value.Shape(), got.Shape)
		}
		if got.Dtype != dt {
			return fmt.Errorf("config dtype %v: tensor %s should be %s, but the file stores it as %s", cfg.Dtype, s.name, dt, got.Dtype)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		if !model[name] && modelNamespace(name) {
			return fmt.Errorf("config %s: the file stores tensor %s, which the model does not have", describe(cfg), name)
		}
	}
	return nil
}

// modelNamespace reports whether name is of the form New gives the model's tensors: tok,
// pos, lnf, head, or h<i>, alone or followed by a dot.
func modelNamespace(name string) bool {
	space, _, _ := strings.Cut(name, ".")
	switch space {
	case "tok", "pos", "lnf", "head":
		return true
	}
	digits := strings.TrimPrefix(space, "h")
	return len(digits) > 0 && len(digits) < len(space) && strings.Trim(digits, "0123456789") == ""
}

// describe names the settings of cfg that decide which tensors its model has.
func describe(cfg Config) string {
	js, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Sprintf("%+v", cfg)
	}
	return string(js)
}

// storedDtype is the safetensors dtype of a model of dtype d.
func storedDtype(d spec.Dtype) safetensors.Dtype {
	if d == spec.Float64 {
		return safetensors.F64
	}
	return safetensors.F32
}

// hasTensor reports whether the file stores a tensor of that name.
func hasTensor(byName map[string]safetensors.Tensor, name string) bool {
	_, ok := byName[name]
	return ok
}

// copyInto copies a stored tensor into a parameter of the same shape and dtype, refusing
// a value that is not finite.
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
		if err := checkFinite(t, src); err != nil {
			return err
		}
		copy(v, src)
	case []float64:
		src, err := safetensors.Data[float64](t)
		if err != nil {
			return err
		}
		if err := checkFinite(t, src); err != nil {
			return err
		}
		copy(v, src)
	}
	return nil
}

// checkFinite returns an error naming t and the first element of data (t's) that is NaN
// or infinite, with its flat and its row-major index.
func checkFinite[E float32 | float64](t safetensors.Tensor, data []E) error {
	for i, x := range data {
		if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("tensor %s holds a non-finite weight: element %d (index %v) is %v", t.Name, i, unflatten(i, t.Shape), f)
		}
	}
	return nil
}

// unflatten is the row-major index in shape of the flat index i.
func unflatten(i int, shape []int) []int {
	idx := make([]int, len(shape))
	for k := len(shape) - 1; k >= 0; k-- {
		if shape[k] > 0 {
			idx[k] = i % shape[k]
			i /= shape[k]
		}
	}
	return idx
}

// MetaInt reads an integer metadata entry, or returns an error naming it.
func (c *Checkpoint) MetaInt(key string) (int, error) {
	v, err := strconv.Atoi(c.Meta[key])
	if err != nil {
		return 0, fmt.Errorf("checkpoint metadata %s = %q: %w", key, c.Meta[key], err)
	}
	return v, nil
}
