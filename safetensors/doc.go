// Package safetensors reads and writes the Hugging Face safetensors format.
//
// A file is an 8-byte little-endian unsigned header length N, then N bytes of
// UTF-8 JSON header, then the data section. The header maps each tensor name
// to {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to the
// start of the data section) and may hold a "__metadata__" object of string
// to string. The data section holds each tensor's elements, row-major and
// little-endian, back to back with no gaps.
//
// This package writes the header as compact JSON padded with spaces to a
// multiple of 8 bytes, lays the tensors out in the order given, and validates
// everything it reads: header size, JSON shape, dtypes, offsets (contiguous,
// in range, non-overlapping, matching dtype and shape) and unique names.
package safetensors
