package data

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Vocab is the sorted set of distinct byte values of a corpus. Token id i
// stands for the i-th smallest byte of the set, so a Vocab has at most 256
// ids and every id fits in a uint8. The zero Vocab is empty.
//
// Its serialised form, for checkpoints, is the sorted bytes themselves: see
// [Vocab.Bytes] and [VocabFromBytes]. It implements the binary (gob) and
// JSON marshalling interfaces with that form; in JSON it is an array of the
// byte values as numbers, e.g. [10,32,33].
type Vocab struct {
	symbols []byte
	slots   [256]uint16 // slots[b] is 1 + the id of byte b, or 0 when b is absent
}

// NewVocab returns the vocabulary of the distinct bytes that occur in text.
func NewVocab(text []byte) *Vocab {
	var seen [256]bool
	for _, b := range text {
		seen[b] = true
	}
	symbols := make([]byte, 0, 256)
	for b, ok := range seen {
		if ok {
			symbols = append(symbols, byte(b))
		}
	}
	return newVocab(symbols)
}

// VocabFromBytes rebuilds a vocabulary from its serialised form, the sorted
// distinct bytes returned by [Vocab.Bytes]. It rejects an empty set and bytes
// that are unsorted or repeated, since either would change the meaning of the
// ids stored with a checkpoint.
func VocabFromBytes(symbols []byte) (*Vocab, error) {
	if len(symbols) == 0 {
		return nil, fmt.Errorf("data: vocabulary is empty")
	}
	for i := 1; i < len(symbols); i++ {
		if symbols[i] <= symbols[i-1] {
			return nil, fmt.Errorf("data: vocabulary bytes must be strictly increasing: byte %s at index %d follows byte %s",
				describeByte(symbols[i]), i, describeByte(symbols[i-1]))
		}
	}
	return newVocab(slices.Clone(symbols)), nil
}

// newVocab indexes symbols, which must be sorted and distinct; it keeps the slice.
func newVocab(symbols []byte) *Vocab {
	v := &Vocab{symbols: symbols}
	for id, b := range symbols {
		v.slots[b] = uint16(id + 1)
	}
	return v
}

// Size returns the number of token ids, the number of distinct bytes.
func (v *Vocab) Size() int { return len(v.symbols) }

// Bytes returns a copy of the sorted distinct bytes: the serialised form.
func (v *Vocab) Bytes() []byte { return slices.Clone(v.symbols) }

// Contains reports whether byte b belongs to the vocabulary.
func (v *Vocab) Contains(b byte) bool { return v.slots[b] != 0 }

// Encode maps each byte of text to its token id. A byte outside the
// vocabulary is an error that names the byte and its offset in text.
func (v *Vocab) Encode(text []byte) ([]int, error) {
	ids := make([]int, len(text))
	for i, b := range text {
		slot := v.slots[b]
		if slot == 0 {
			return nil, v.unknownByte(b, i)
		}
		ids[i] = int(slot - 1)
	}
	return ids, nil
}

// EncodeCompact is [Vocab.Encode] with one byte per token id instead of
// eight: ids fit in a uint8 because a vocabulary has at most 256 of them.
// Use it for large corpora (enwik8's train split is 90 MB as uint8, 720 MB
// as int); [Sampler] and [EvalWindows] accept either form.
func (v *Vocab) EncodeCompact(text []byte) ([]uint8, error) {
	ids := make([]uint8, len(text))
	for i, b := range text {
		slot := v.slots[b]
		if slot == 0 {
			return nil, v.unknownByte(b, i)
		}
		ids[i] = uint8(slot - 1)
	}
	return ids, nil
}

// Decode maps token ids back to bytes. An id outside [0, Size()) is an error
// that names the id and its offset.
func (v *Vocab) Decode(ids []int) ([]byte, error) {
	text := make([]byte, len(ids))
	for i, id := range ids {
		if id < 0 || id >= len(v.symbols) {
			return nil, fmt.Errorf("data: token id %d at offset %d is outside the vocabulary of %d ids", id, i, len(v.symbols))
		}
		text[i] = v.symbols[id]
	}
	return text, nil
}

// MarshalBinary implements [encoding.BinaryMarshaler]: it returns [Vocab.Bytes].
func (v *Vocab) MarshalBinary() ([]byte, error) { return v.Bytes(), nil }

// UnmarshalBinary implements [encoding.BinaryUnmarshaler] with the checks of
// [VocabFromBytes].
func (v *Vocab) UnmarshalBinary(symbols []byte) error {
	parsed, err := VocabFromBytes(symbols)
	if err != nil {
		return err
	}
	*v = *parsed
	return nil
}

// MarshalJSON implements [json.Marshaler]: an array of the byte values.
func (v *Vocab) MarshalJSON() ([]byte, error) {
	values := make([]int, len(v.symbols))
	for i, b := range v.symbols {
		values[i] = int(b)
	}
	return json.Marshal(values)
}

// UnmarshalJSON implements [json.Unmarshaler] with the checks of
// [VocabFromBytes], and rejects values outside 0..255.
func (v *Vocab) UnmarshalJSON(text []byte) error {
	var values []int
	if err := json.Unmarshal(text, &values); err != nil {
		return fmt.Errorf("data: vocabulary must be a JSON array of byte values: %w", err)
	}
	symbols := make([]byte, len(values))
	for i, x := range values {
		if x < 0 || x > 255 {
			return fmt.Errorf("data: vocabulary value %d at index %d is not a byte", x, i)
		}
		symbols[i] = byte(x)
	}
	return v.UnmarshalBinary(symbols)
}

func (v *Vocab) unknownByte(b byte, offset int) error {
	return fmt.Errorf("data: byte %s at offset %d is not in the vocabulary of %d bytes", describeByte(b), offset, len(v.symbols))
}

// describeByte writes b in hex, followed by the character when b is printable ASCII.
func describeByte(b byte) string {
	if b < utf8.RuneSelf && strconv.IsPrint(rune(b)) {
		return fmt.Sprintf("%#02x %q", b, b)
	}
	return fmt.Sprintf("%#02x", b)
}
