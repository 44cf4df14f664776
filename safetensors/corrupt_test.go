package safetensors

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// assemble builds a file from a header and a data section per the format.
func assemble(header string, data []byte) []byte {
	f := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	f = append(f, header...)
	return append(f, data...)
}

// assertErrorMentions fails t unless err is non-nil and mentions every part.
func assertErrorMentions(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one mentioning %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not mention %q", err, p)
		}
	}
}

func TestReadRejectsCorruptHeaders(t *testing.T) {
	eight := make([]byte, 8)
	tests := []struct {
		name   string
		header string
		data   []byte
		want   []string
	}{
		{"bad JSON", `{"a":{"dtype":"F32",`, nil, []string{"header JSON"}},
		{"not an object", `[1,2]`, nil, []string{"not a JSON object"}},
		{"garbage after object", `{} x`, nil, []string{"after the top-level object"}},
		{"invalid UTF-8", "{\"\xff\":1}", nil, []string{"UTF-8"}},
		{"entry not an object", `{"a":[1]}`, nil, []string{`"a"`, "not a JSON object"}},
		{"overlapping offsets",
			`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`,
			make([]byte, 12), []string{`"b"`, `overlap tensor "a"`}},
		{"gap between tensors",
			`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}`,
			make([]byte, 12), []string{`"b"`, "unused"}},
		{"gap at start", `{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, eight, []string{`"a"`, "unused"}},
		{"length not matching shape", `{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, eight,
			[]string{`"a"`, "span 8 bytes", "need 12"}},
		{"end before begin", `{"a":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}}`, eight, []string{`"a"`, "invalid data_offsets"}},
		{"negative offset", `{"a":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}}`, eight, []string{`"a"`, "invalid data_offsets"}},
		{"one offset", `{"a":{"dtype":"F32","shape":[1],"data_offsets":[4]}}`, eight, []string{`"a"`, "[begin, end]"}},
		{"negative dimension", `{"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}`, eight, []string{`"a"`, "invalid shape"}},
		{"huge shape", `{"a":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,8]}}`, eight,
			[]string{`"a"`, "invalid shape"}},
		{"fractional dimension", `{"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,8]}}`, eight, []string{`"a"`}},
		{"unsupported dtype", `{"a":{"dtype":"BF16","shape":[4],"data_offsets":[0,8]}}`, eight,
			[]string{`"a"`, `unsupported dtype "BF16"`}},
		{"no dtype", `{"a":{"shape":[2],"data_offsets":[0,8]}}`, eight, []string{`"a"`, "no dtype"}},
		{"no shape", `{"a":{"dtype":"F32","data_offsets":[0,8]}}`, eight, []string{`"a"`, "no shape"}},
		{"duplicate name",
			`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`,
			eight, []string{`"a"`, "twice"}},
		{"empty name", `{"":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, eight, []string{"empty name"}},
		{"metadata not strings", `{"__metadata__":{"k":1}}`, nil, []string{"__metadata__"}},
		{"data shorter than header says", `{"a":{"dtype":"F64","shape":[2],"data_offsets":[0,16]}}`, eight,
			[]string{`"a"`, "unexpected EOF"}},
		{"trailing bytes", `{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, eight, []string{"trailing bytes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Read(bytes.NewReader(assemble(tt.header, tt.data)))
			assertErrorMentions(t, err, tt.want...)
		})
	}
}

func TestReadRejectsEveryTruncation(t *testing.T) {
	full := goldenFile()
	for n := range len(full) {
		if _, _, err := Read(bytes.NewReader(full[:n])); err == nil {
			t.Fatalf("Read accepted the file truncated to %d of %d bytes", n, len(full))
		}
	}
}

func TestReadRejectsHugeHeaderLength(t *testing.T) {
	f := binary.LittleEndian.AppendUint64(nil, 1<<40)
	_, _, err := Read(bytes.NewReader(append(f, '{', '}')))
	assertErrorMentions(t, err, "header length 1099511627776", "limit")
}

func TestReadFileChecksSizes(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		file []byte
		want []string
	}{
		{"header longer than file", append(binary.LittleEndian.AppendUint64(nil, 64), "{}"...), []string{"header length 64", "exceeds"}},
		{"data section too long", assemble(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, make([]byte, 8)),
			[]string{"data section has 8 bytes", "describes 4"}},
		{"data section too short", assemble(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, make([]byte, 4)),
			[]string{"data section has 4 bytes", "describes 8"}},
		{"shorter than the length field", []byte{1, 2, 3}, []string{"header length", "unexpected EOF"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_"))
			if err := os.WriteFile(path, tt.file, 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := ReadFile(path)
			assertErrorMentions(t, err, append(tt.want, path)...)
		})
	}
}

func TestWriteRejectsBadTensors(t *testing.T) {
	ok := New("ok", []int{1}, []float32{1})
	tests := []struct {
		name    string
		tensors []Tensor
		meta    map[string]string
		want    []string
	}{
		{"duplicate name", []Tensor{ok, ok}, nil, []string{`"ok"`, "twice"}},
		{"empty name", []Tensor{New("", []int{1}, []float32{1})}, nil, []string{"empty name"}},
		{"reserved name", []Tensor{New(metadataKey, []int{1}, []float32{1})}, nil, []string{"reserved"}},
		{"invalid UTF-8 name", []Tensor{New("\xff", []int{1}, []float32{1})}, nil, []string{"UTF-8"}},
		{"shape mismatch", []Tensor{New("x", []int{2, 2}, []float32{1, 2, 3})}, nil, []string{`"x"`, "4 elements", "has 3"}},
		{"nil shape is a scalar", []Tensor{New("x", nil, []float32{1, 2})}, nil, []string{`"x"`, "1 elements", "has 2"}},
		{"negative dimension", []Tensor{New("x", []int{-1}, []float32{})}, nil, []string{`"x"`, "negative"}},
		{"data type mismatch", []Tensor{{Name: "x", Dtype: F32, Shape: []int{1}, Data: []float64{1}}}, nil,
			[]string{`"x"`, "[]float64"}},
		{"unsupported dtype", []Tensor{{Name: "x", Dtype: "BF16", Shape: []int{1}, Data: []uint8{1, 2}}}, nil,
			[]string{`"x"`, "unsupported dtype"}},
		{"invalid UTF-8 metadata", []Tensor{ok}, map[string]string{"k": "\xff"}, []string{"metadata", `"k"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := Write(&buf, tt.tensors, tt.meta)
			assertErrorMentions(t, err, tt.want...)
			if buf.Len() != 0 {
				t.Errorf("Write wrote %d bytes before rejecting its input", buf.Len())
			}
		})
	}
}

// failingWriter accepts limit bytes, then fails.
type failingWriter struct{ limit int }

var errDiskFull = errors.New("disk full")

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.limit {
		n := w.limit
		w.limit = 0
		return n, errDiskFull
	}
	w.limit -= len(p)
	return len(p), nil
}

func TestWriteReportsWriterErrors(t *testing.T) {
	tensors, meta := goldenTensors()
	for _, limit := range []int{0, 8, 208, 216} {
		err := Write(&failingWriter{limit: limit}, tensors, meta)
		if !errors.Is(err, errDiskFull) {
			t.Errorf("writer failing after %d bytes: error %v, want %v", limit, err, errDiskFull)
		}
	}
}
