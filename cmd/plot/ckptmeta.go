package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"lipformer/safetensors"
)

// checkpointMeta reads the metadata of a safetensors file without reading its tensors:
// the file starts with the little-endian length of its JSON header, whose
// "__metadata__" object holds the metadata.
func checkpointMeta(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	var lenBuf [8]byte
	if _, err := io.ReadFull(f, lenBuf[:]); err != nil {
		return nil, fmt.Errorf("%s: reading the header length: %w", path, err)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n > safetensors.MaxHeaderSize || n > uint64(info.Size()-8) {
		return nil, fmt.Errorf("%s: header length %d does not fit the %d-byte file", path, n, info.Size())
	}
	raw := make([]byte, n)
	if _, err := io.ReadFull(f, raw); err != nil {
		return nil, fmt.Errorf("%s: reading the header: %w", path, err)
	}
	var h struct {
		Meta map[string]string `json:"__metadata__"`
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, fmt.Errorf("%s: header: %w", path, err)
	}
	return h.Meta, nil
}
