package safetensors

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// chunkBytes is the size of the buffer through which elements are encoded
// and decoded; it is a multiple of every element size.
const chunkBytes = 1 << 16

// writeData writes the elements of t, which has been validated, to w in
// little-endian order through buf (chunkBytes long).
func writeData(w io.Writer, t Tensor, buf []byte) error {
	switch d := t.Data.(type) {
	case []float32:
		return writeElems(w, d, buf, 4, func(b []byte, x float32) { binary.LittleEndian.PutUint32(b, math.Float32bits(x)) })
	case []float64:
		return writeElems(w, d, buf, 8, func(b []byte, x float64) { binary.LittleEndian.PutUint64(b, math.Float64bits(x)) })
	case []int32:
		return writeElems(w, d, buf, 4, func(b []byte, x int32) { binary.LittleEndian.PutUint32(b, uint32(x)) })
	case []int64:
		return writeElems(w, d, buf, 8, func(b []byte, x int64) { binary.LittleEndian.PutUint64(b, uint64(x)) })
	case []uint8:
		_, err := w.Write(d)
		return err
	}
	return fmt.Errorf("tensor %q: unsupported Data type %T", t.Name, t.Data)
}

// writeElems encodes data chunk by chunk into buf with put (size bytes per
// element) and writes each chunk to w.
func writeElems[E Element](w io.Writer, data []E, buf []byte, size int, put func([]byte, E)) error {
	per := len(buf) / size
	for len(data) > 0 {
		n := min(per, len(data))
		for i, x := range data[:n] {
			put(buf[i*size:], x)
		}
		if _, err := w.Write(buf[:n*size]); err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// readData reads n elements of dtype dt from r through buf (chunkBytes long)
// and returns them as the slice type that Tensor.Data uses for dt. The result
// starts with capacity min(n, capHint) and grows as data arrives, so a short
// stream cannot make it allocate more than it holds.
func readData(r io.Reader, dt Dtype, n, capHint int, buf []byte) (any, error) {
	switch dt {
	case F32:
		return readElems(r, n, capHint, buf, 4, func(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) })
	case F64:
		return readElems(r, n, capHint, buf, 8, func(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) })
	case I32:
		return readElems(r, n, capHint, buf, 4, func(b []byte) int32 { return int32(binary.LittleEndian.Uint32(b)) })
	case I64:
		return readElems(r, n, capHint, buf, 8, func(b []byte) int64 { return int64(binary.LittleEndian.Uint64(b)) })
	case U8:
		return readElems(r, n, capHint, buf, 1, func(b []byte) uint8 { return b[0] })
	}
	return nil, fmt.Errorf("unsupported dtype %q", dt)
}

// readElems reads n elements of size bytes each from r, decoding each with get.
func readElems[E Element](r io.Reader, n, capHint int, buf []byte, size int, get func([]byte) E) ([]E, error) {
	out := make([]E, 0, min(n, capHint))
	per := len(buf) / size
	for len(out) < n {
		k := min(per, n-len(out))
		if _, err := io.ReadFull(r, buf[:k*size]); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		for i := range k {
			out = append(out, get(buf[i*size:]))
		}
	}
	return out, nil
}
