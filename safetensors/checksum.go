package safetensors

import (
	"fmt"
	"hash/crc32"
)

// Checksum returns the CRC-32C (Castagnoli) of t's data as a file holds it: the elements
// in row-major order, little-endian, without the header. It fails when t cannot be
// written (see Write), naming t.
func Checksum(t Tensor) (uint32, error) {
	if err := t.validate(); err != nil {
		return 0, fmt.Errorf("safetensors: %w", err)
	}
	h := crc32.New(crc32.MakeTable(crc32.Castagnoli)) // the table is built once per process
	if err := writeData(h, t, make([]byte, chunkBytes)); err != nil {
		return 0, fmt.Errorf("safetensors: tensor %q: checksum: %w", t.Name, err)
	}
	return h.Sum32(), nil
}
