package safetensors

import (
	"encoding/binary"
	"fmt"
	"io"
	"unicode/utf8"

	"lipformer/internal/atomicfile"
)

// Write writes tensors and metadata to w in safetensors format, laying the
// tensors out in the order given. Empty metadata is omitted from the header.
// Every tensor is validated before anything is written; an error names the
// offending tensor.
func Write(w io.Writer, tensors []Tensor, metadata map[string]string) error {
	if err := validate(tensors, metadata); err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	hdr, err := encodeHeader(tensors, metadata)
	if err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	var size [8]byte
	binary.LittleEndian.PutUint64(size[:], uint64(len(hdr)))
	if _, err := w.Write(size[:]); err != nil {
		return fmt.Errorf("safetensors: writing header length: %w", err)
	}
	if _, err := w.Write(hdr); err != nil {
		return fmt.Errorf("safetensors: writing header: %w", err)
	}
	buf := make([]byte, chunkBytes)
	for _, t := range tensors {
		if err := writeData(w, t, buf); err != nil {
			return fmt.Errorf("safetensors: tensor %q: writing data: %w", t.Name, err)
		}
	}
	return nil
}

// WriteFile writes tensors and metadata to the file at path atomically: the
// file is written to a temporary file in the same directory, synced, and
// renamed over path, so path holds either its old content or the new one.
// Directories above path are created as needed.
func WriteFile(path string, tensors []Tensor, metadata map[string]string) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		return Write(w, tensors, metadata)
	})
}

// validate checks every tensor, name uniqueness and the metadata.
func validate(tensors []Tensor, metadata map[string]string) error {
	seen := make(map[string]bool, len(tensors))
	for _, t := range tensors {
		if err := t.validate(); err != nil {
			return err
		}
		if seen[t.Name] {
			return fmt.Errorf("tensor %q appears twice", t.Name)
		}
		seen[t.Name] = true
	}
	for k, v := range metadata {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return fmt.Errorf("metadata %q: key and value must be valid UTF-8", k)
		}
	}
	return nil
}
