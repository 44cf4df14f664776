package safetensors

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"unicode/utf8"
)

// MaxHeaderSize is the largest JSON header, in bytes, that Read accepts (the
// limit of the reference implementation).
const MaxHeaderSize = 100_000_000

// headerAlign is the multiple to which the writer pads the header, so that
// the data section starts 8-byte aligned.
const headerAlign = 8

// entry is one tensor as described by a header.
type entry struct {
	Dtype       Dtype    `json:"dtype"`
	Shape       []int    `json:"shape"`
	DataOffsets [2]int64 `json:"data_offsets"`
}

// header is a parsed and validated header.
type header struct {
	names    []string // in data order
	entries  []entry  // entries[i] describes names[i]
	metadata map[string]string
	dataLen  int64 // total bytes of the data section
}

// encodeHeader returns the padded JSON header for tensors, which have been
// validated, laid out in order. Empty metadata is omitted.
func encodeHeader(tensors []Tensor, metadata map[string]string) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	if len(metadata) > 0 {
		m, err := json.Marshal(metadata)
		if err != nil {
			return nil, fmt.Errorf("encoding metadata: %w", err)
		}
		b.WriteString(`"` + metadataKey + `":`)
		b.Write(m)
	}
	var offset int64
	for i, t := range tensors {
		if i > 0 || len(metadata) > 0 {
			b.WriteByte(',')
		}
		size := int64(dataLen(t) * t.Dtype.Size())
		e := entry{Dtype: t.Dtype, Shape: t.Shape, DataOffsets: [2]int64{offset, offset + size}}
		if e.Shape == nil {
			e.Shape = []int{}
		}
		name, err := json.Marshal(t.Name)
		if err != nil {
			return nil, fmt.Errorf("tensor %q: encoding name: %w", t.Name, err)
		}
		info, err := json.Marshal(e)
		if err != nil {
			return nil, fmt.Errorf("tensor %q: encoding header entry: %w", t.Name, err)
		}
		b.Write(name)
		b.WriteByte(':')
		b.Write(info)
		offset += size
	}
	b.WriteByte('}')
	for b.Len()%headerAlign != 0 {
		b.WriteByte(' ')
	}
	return b.Bytes(), nil
}

// parseHeader decodes and validates a JSON header: a JSON object, unique
// tensor names, supported dtypes, shapes matching offsets, and offsets that
// tile the data section from 0 without gaps or overlaps.
func parseHeader(raw []byte) (*header, error) {
	if !utf8.Valid(raw) {
		return nil, errors.New("header is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("header is not a JSON object")
	}
	h := &header{}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("header JSON: %w", err)
		}
		name, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("header JSON: unexpected %v", tok)
		}
		if seen[name] {
			return nil, fmt.Errorf("tensor %q appears twice in the header", name)
		}
		seen[name] = true
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, fmt.Errorf("header JSON after key %q: %w", name, err)
		}
		if name == metadataKey {
			if err := json.Unmarshal(value, &h.metadata); err != nil {
				return nil, fmt.Errorf("%s must map strings to strings: %w", metadataKey, err)
			}
			continue
		}
		e, err := parseEntry(name, value)
		if err != nil {
			return nil, err
		}
		h.names = append(h.names, name)
		h.entries = append(h.entries, e)
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("header JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("header JSON: unexpected data after the top-level object")
	}
	if err := h.layOut(); err != nil {
		return nil, err
	}
	return h, nil
}

// rawEntry is a header entry as decoded, before validation; a nil field was
// missing from the JSON.
type rawEntry struct {
	Dtype       *Dtype  `json:"dtype"`
	Shape       []int   `json:"shape"`
	DataOffsets []int64 `json:"data_offsets"`
}

// parseEntry decodes and checks one tensor's header entry on its own.
func parseEntry(name string, value json.RawMessage) (entry, error) {
	if err := validName(name); err != nil {
		return entry{}, err
	}
	if len(value) == 0 || value[0] != '{' {
		return entry{}, fmt.Errorf("tensor %q: header entry is not a JSON object", name)
	}
	var e rawEntry
	if err := json.Unmarshal(value, &e); err != nil {
		return entry{}, fmt.Errorf("tensor %q: %w", name, err)
	}
	switch {
	case e.Dtype == nil:
		return entry{}, fmt.Errorf("tensor %q: no dtype", name)
	case e.Shape == nil:
		return entry{}, fmt.Errorf("tensor %q: no shape", name)
	case len(e.DataOffsets) != 2:
		return entry{}, fmt.Errorf("tensor %q: data_offsets must be [begin, end], got %v", name, e.DataOffsets)
	}
	size := e.Dtype.Size()
	if size == 0 {
		return entry{}, fmt.Errorf("tensor %q: unsupported dtype %q (supported: %s)", name, *e.Dtype, supportedDtypes)
	}
	n, err := numElements(e.Shape)
	if err != nil || n > maxBytes/size {
		return entry{}, fmt.Errorf("tensor %q: invalid shape %v", name, e.Shape)
	}
	begin, end := e.DataOffsets[0], e.DataOffsets[1]
	if begin < 0 || end < begin {
		return entry{}, fmt.Errorf("tensor %q: invalid data_offsets [%d, %d]", name, begin, end)
	}
	if want := int64(n * size); end-begin != want {
		return entry{}, fmt.Errorf("tensor %q: data_offsets [%d, %d] span %d bytes, but dtype %s and shape %v need %d",
			name, begin, end, end-begin, *e.Dtype, e.Shape, want)
	}
	return entry{Dtype: *e.Dtype, Shape: e.Shape, DataOffsets: [2]int64{begin, end}}, nil
}

// layOut sorts the tensors into data order and checks that they tile the
// data section from offset 0 without gaps or overlaps.
func (h *header) layOut() error {
	order := make([]int, len(h.names))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		oa, ob := h.entries[a].DataOffsets, h.entries[b].DataOffsets
		if oa[0] != ob[0] {
			return cmp.Compare(oa[0], ob[0])
		}
		return cmp.Compare(oa[1], ob[1])
	})
	names := make([]string, len(order))
	entries := make([]entry, len(order))
	var next int64
	for i, j := range order {
		names[i], entries[i] = h.names[j], h.entries[j]
		begin, end := entries[i].DataOffsets[0], entries[i].DataOffsets[1]
		switch {
		case begin < next:
			return fmt.Errorf("tensor %q: data_offsets [%d, %d] overlap tensor %q, which ends at %d",
				names[i], begin, end, names[i-1], next)
		case begin > next:
			return fmt.Errorf("tensor %q: data_offsets [%d, %d] leave bytes [%d, %d) of the data section unused",
				names[i], begin, end, next, begin)
		}
		next = end
	}
	h.names, h.entries, h.dataLen = names, entries, next
	return nil
}
