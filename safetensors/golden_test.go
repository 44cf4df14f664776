package safetensors

import (
	"bytes"
	"testing"
)

// goldenTensors and goldenMetadata are the content of goldenFile.
func goldenTensors() ([]Tensor, map[string]string) {
	return []Tensor{
		New("a", []int{2}, []float32{1, -2.5}),
		New("b", []int{}, []float64{0.5}),
		New("c", []int{1, 2}, []int64{-3, 258}),
	}, map[string]string{"format": "pt"}
}

// goldenFile is goldenTensors assembled by hand from the format description:
// header length, JSON header padded with spaces to a multiple of 8, then the
// little-endian IEEE 754 / two's complement bytes of each tensor.
func goldenFile() []byte {
	var f []byte
	f = append(f, 0xc8, 0, 0, 0, 0, 0, 0, 0) // 200 bytes of header
	f = append(f, `{"__metadata__":{"format":"pt"},`+
		`"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},`+
		`"b":{"dtype":"F64","shape":[],"data_offsets":[8,16]},`+
		`"c":{"dtype":"I64","shape":[1,2],"data_offsets":[16,32]}}`+
		`     `...)
	f = append(f, 0x00, 0x00, 0x80, 0x3f)                         // float32 1 = 0x3f800000
	f = append(f, 0x00, 0x00, 0x20, 0xc0)                         // float32 -2.5 = 0xc0200000
	f = append(f, 0, 0, 0, 0, 0, 0, 0xe0, 0x3f)                   // float64 0.5 = 0x3fe0000000000000
	f = append(f, 0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff) // int64 -3
	f = append(f, 0x02, 0x01, 0, 0, 0, 0, 0, 0)                   // int64 258 = 0x102
	return f
}

func TestWriteMatchesHandAssembledFile(t *testing.T) {
	want := goldenFile()
	if len(want) != 8+200+32 {
		t.Fatalf("hand-assembled file has %d bytes, want %d", len(want), 8+200+32)
	}
	tensors, meta := goldenTensors()
	var got bytes.Buffer
	if err := Write(&got, tensors, meta); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("written file differs from the hand-assembled one:\n got %q\nwant %q", got.Bytes(), want)
	}
}

func TestReadHandAssembledFile(t *testing.T) {
	got, meta, err := Read(bytes.NewReader(goldenFile()))
	if err != nil {
		t.Fatal(err)
	}
	want, wantMeta := goldenTensors()
	assertTensorsEqual(t, got, want)
	assertMetadataEqual(t, meta, wantMeta)
}

func TestReadAcceptsOtherWritersLayout(t *testing.T) {
	// Whitespace, fields in another order, entries not in data order and no
	// padding are all valid.
	header := `{ "c" : {"data_offsets": [16, 32], "shape": [1, 2], "dtype": "I64"},
		"__metadata__": {"format": "pt"},
		"b": {"shape": [], "dtype": "F64", "data_offsets": [8, 16]},
		"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]} }`
	data := goldenFile()[8+200:]
	got, meta, err := Read(bytes.NewReader(assemble(header, data)))
	if err != nil {
		t.Fatal(err)
	}
	want, wantMeta := goldenTensors()
	assertTensorsEqual(t, got, want)
	assertMetadataEqual(t, meta, wantMeta)
}
