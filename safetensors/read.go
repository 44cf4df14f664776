package safetensors

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// Read reads a safetensors stream from r and returns its tensors in data
// order (for files this package wrote, the order they were written in) and
// its metadata (nil when the header has none). The whole stream must be
// consumed by the file: trailing bytes are an error.
func Read(r io.Reader) ([]Tensor, map[string]string, error) {
	return read(r, -1)
}

// ReadFile reads the safetensors file at path; see Read. Because the file
// size is known, a header describing more or less data than the file holds is
// rejected before any tensor is allocated.
func ReadFile(path string) ([]Tensor, map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("safetensors: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("safetensors: %w", err)
	}
	tensors, metadata, err := read(f, info.Size())
	if err != nil {
		return nil, nil, fmt.Errorf("%w (file %s)", err, path)
	}
	return tensors, metadata, nil
}

// ReadMetadataFile reads the metadata of the safetensors file at path (nil when the
// header has none) without reading its tensors. The header is validated as ReadFile
// validates it, and must describe as many data bytes as the file holds.
func ReadMetadataFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	h, err := readHeader(f, info.Size())
	if err != nil {
		return nil, fmt.Errorf("%w (file %s)", err, path)
	}
	return h.metadata, nil
}

// readHeader reads and validates the header of a safetensors stream of size bytes, or of
// unknown size when size is negative; a known size must match the data section the
// header describes.
func readHeader(r io.Reader, size int64) (*header, error) {
	var lenBuf [8]byte
	if _, err := io.ReadFull(r, lenBuf[:]); err != nil {
		return nil, fmt.Errorf("safetensors: reading header length: %w", eofIsUnexpected(err))
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	switch {
	case n > MaxHeaderSize:
		return nil, fmt.Errorf("safetensors: header length %d exceeds the limit of %d bytes", n, MaxHeaderSize)
	case size >= 0 && n > uint64(size-8):
		return nil, fmt.Errorf("safetensors: header length %d exceeds the %d bytes after the length field", n, size-8)
	}
	raw := make([]byte, n)
	if _, err := io.ReadFull(r, raw); err != nil {
		return nil, fmt.Errorf("safetensors: reading %d-byte header: %w", n, eofIsUnexpected(err))
	}
	h, err := parseHeader(raw)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	if size >= 0 {
		if have := size - 8 - int64(n); have != h.dataLen {
			return nil, fmt.Errorf("safetensors: data section has %d bytes, header describes %d", have, h.dataLen)
		}
	}
	return h, nil
}

// read reads a safetensors stream of size bytes, or of unknown size when
// size is negative.
func read(r io.Reader, size int64) ([]Tensor, map[string]string, error) {
	h, err := readHeader(r, size)
	if err != nil {
		return nil, nil, err
	}
	capHint := chunkBytes
	if size >= 0 {
		capHint = math.MaxInt
	}
	tensors := make([]Tensor, len(h.names))
	buf := make([]byte, chunkBytes)
	for i, e := range h.entries {
		count := int((e.DataOffsets[1] - e.DataOffsets[0]) / int64(e.Dtype.Size()))
		data, err := readData(r, e.Dtype, count, capHint, buf)
		if err != nil {
			return nil, nil, fmt.Errorf("safetensors: tensor %q: reading data: %w", h.names[i], err)
		}
		tensors[i] = Tensor{Name: h.names[i], Dtype: e.Dtype, Shape: e.Shape, Data: data}
	}
	var extra [1]byte
	switch _, err := io.ReadFull(r, extra[:]); {
	case err == nil:
		return nil, nil, errors.New("safetensors: trailing bytes after the data section")
	case err != io.EOF:
		return nil, nil, fmt.Errorf("safetensors: checking for trailing bytes: %w", err)
	}
	return tensors, h.metadata, nil
}

// eofIsUnexpected turns a clean end of stream into io.ErrUnexpectedEOF: in
// the middle of a file, running out of bytes means the file is truncated.
func eofIsUnexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
