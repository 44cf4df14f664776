package model

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"gorgonia.org/tensor"

	"lipformer/layers"
	"lipformer/ops"
	"lipformer/safetensors"
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
	if err := checkStored(cfg, byName); err != nil {
		return nil, nil, fmt.Errorf("load %s: %w", path, err)
	}
	m, err := New(cfg, 0)
	if err != nil {
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

// impliedTensor is a stored tensor whose shape the config fixes.
type impliedTensor struct {
	name   string
	shape  []int
	fields string // the config fields that fix the shape, with their values
}

// checkStored checks cfg against the stored tensors before the model is built, so that a
// config claiming more than the file holds is refused without allocating its model:
// every tensor whose shape gives one of the sizes of the config (vocab, width, context,
// hidden, heads, layers) must be stored with that shape and the config's dtype, the file
// must hold exactly cfg.Layers blocks and, with a tied head, no head.w, and the number of
// parameters the config implies may not exceed the number of values the file stores.
func checkStored(cfg Config, byName map[string]safetensors.Tensor) error {
	dt := safetensors.F32
	if cfg.Dtype == "float64" {
		dt = safetensors.F64
	}
	d, v, t, h, hid := cfg.Width, cfg.Vocab, cfg.Context, cfg.Heads, cfg.hidden()
	check := func(want impliedTensor) error {
		got, ok := byName[want.name]
		if !ok {
			return fmt.Errorf("config %s: the file holds no tensor %s (of shape %v)", want.fields, want.name, want.shape)
		}
		if !slices.Equal(got.Shape, want.shape) {
			return fmt.Errorf("config %s: tensor %s should have shape %v, but the file stores it with shape %v", want.fields, want.name, want.shape, got.Shape)
		}
		if got.Dtype != dt {
			return fmt.Errorf("config dtype %s: tensor %s should be %s, but the file stores it as %s", cfg.Dtype, want.name, dt, got.Dtype)
		}
		return nil
	}
	fixed := []impliedTensor{
		{"tok", []int{v, d}, fmt.Sprintf("vocab %d and width %d", v, d)},
		{"pos", []int{t, d}, fmt.Sprintf("context %d and width %d", t, d)},
		{"lnf.gain", []int{d}, fmt.Sprintf("width %d", d)},
	}
	if !cfg.Tie {
		fixed = append(fixed, impliedTensor{"head.w", []int{d, v}, fmt.Sprintf("width %d, vocab %d and tie false", d, v)})
	} else if hasTensor(byName, "head.w") {
		return fmt.Errorf("config tie true: the head is the token table, but the file stores a tensor head.w")
	}
	for _, want := range fixed {
		if err := check(want); err != nil {
			return err
		}
	}
	for i := 0; i < cfg.Layers; i++ { // stops at the first missing block, however many are claimed
		block := []impliedTensor{
			{fmt.Sprintf("h%d.attn.wq", i), []int{d, d}, fmt.Sprintf("layers %d and width %d", cfg.Layers, d)},
			{fmt.Sprintf("h%d.mlp.fc.w", i), []int{d, hid}, fmt.Sprintf("width %d and hidden %d", d, hid)},
		}
		if cfg.L2Temp {
			block = append(block, impliedTensor{fmt.Sprintf("h%d.attn.logtemp", i), []int{h}, fmt.Sprintf("heads %d and l2_temp true", h)})
		}
		if cfg.L2PosBias {
			block = append(block, impliedTensor{fmt.Sprintf("h%d.attn.posbias", i), []int{h, t}, fmt.Sprintf("heads %d, context %d and l2_pos_bias true", h, t)})
		}
		if cfg.MLPGain > 0 {
			block = append(block, impliedTensor{fmt.Sprintf("h%d.mlp.loggain", i), []int{1}, fmt.Sprintf("mlp_gain %g", cfg.MLPGain)})
		}
		for _, want := range block {
			if err := check(want); err != nil {
				return err
			}
		}
	}
	if extra := fmt.Sprintf("h%d.attn.wq", cfg.Layers); hasTensor(byName, extra) {
		return fmt.Errorf("config layers %d: the file stores tensor %s of a further block", cfg.Layers, extra)
	}
	var stored float64
	for _, t := range byName {
		n := 1.0
		for _, k := range t.Shape {
			n *= float64(k)
		}
		stored += n
	}
	if implied := cfg.impliedParams(); implied > stored {
		return fmt.Errorf("config layers %d, width %d, hidden %d, context %d and vocab %d: the model would have %.0f parameters, more than the %.0f values of all the file's tensors",
			cfg.Layers, d, hid, t, v, implied, stored)
	}
	return nil
}

// hasTensor reports whether the file stores a tensor of that name.
func hasTensor(byName map[string]safetensors.Tensor, name string) bool {
	_, ok := byName[name]
	return ok
}

// impliedParams is the number of parameters of the model that c describes (NumParams),
// computed from c alone, in floating point so that no config overflows it.
func (c Config) impliedParams() float64 {
	d, v, t, h, hid := float64(c.Width), float64(c.Vocab), float64(c.Context), float64(c.Heads), float64(c.hidden())
	n := v*d + t*d + 2*d // token and position tables, final LayerNorm
	if !c.Tie {
		n += d * v
	}
	block := 3*d*d + 2*d*hid + hid + d // W^Q, W^V, W^O and the MLP
	if kind, _ := c.attentionKind(); kind != ops.L2 {
		block += d * d // W^K
	}
	if c.L2Temp {
		block += h
	}
	if c.L2PosBias {
		block += h * t
	}
	if c.MLPGain > 0 {
		block++
	}
	switch {
	case c.Norm == string(layers.BallPre):
		block += 2 // the blocks' two ball norms' log radii
	case !c.invertible() && c.Norm != string(layers.NoLN):
		block += 4 * d // the blocks' two LayerNorms
	}
	return n + float64(c.Layers)*block
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
