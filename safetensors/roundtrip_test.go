package safetensors

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// assertTensorsEqual fails t unless got and want hold the same tensors in the
// same order, with bit-identical data (so NaN payloads and -0 count).
func assertTensorsEqual(t *testing.T, got, want []Tensor) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d tensors, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Name != w.Name || g.Dtype != w.Dtype || !shapeEqual(g.Shape, w.Shape) {
			t.Fatalf("tensor %d: got %s %s %v, want %s %s %v", i, g.Name, g.Dtype, g.Shape, w.Name, w.Dtype, w.Shape)
		}
		if !bitsEqual(g.Data, w.Data) {
			t.Fatalf("tensor %q: data %v, want %v", w.Name, g.Data, w.Data)
		}
	}
}

// shapeEqual compares shapes, treating nil and empty alike.
func shapeEqual(a, b []int) bool {
	return len(a) == len(b) && (len(a) == 0 || reflect.DeepEqual(a, b))
}

// bitsEqual compares two Data slices element by element on their bits.
func bitsEqual(a, b any) bool {
	switch x := a.(type) {
	case []float32:
		y, ok := b.([]float32)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
				return false
			}
		}
		return true
	case []float64:
		y, ok := b.([]float64)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// assertMetadataEqual compares metadata, treating nil and empty alike.
func assertMetadataEqual(t *testing.T, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
		t.Fatalf("metadata %v, want %v", got, want)
	}
}

// sampleTensors covers every dtype, a scalar, an empty tensor, special float
// values and a tensor larger than the codec's chunk.
func sampleTensors() []Tensor {
	big := make([]float32, chunkBytes/4*2+3)
	for i := range big {
		big[i] = float32(i)*0.25 - 7
	}
	return []Tensor{
		New("w.f32", []int{2, 3}, []float32{1, -2, 3.5, float32(math.Inf(1)), float32(math.NaN()), float32(math.Copysign(0, -1))}),
		New("b.f64", []int{3}, []float64{math.Pi, -1e-300, math.MaxFloat64}),
		New("step", []int{}, []int64{math.MinInt64}),
		New("idx.i32", []int{2}, []int32{-7, math.MaxInt32}),
		New("vocab", []int{4}, []uint8{'a', 'b', 0, 255}),
		New("empty", []int{0, 5}, []float64{}),
		New("big", []int{len(big)}, big),
	}
}

func TestRoundTripStream(t *testing.T) {
	tensors := sampleTensors()
	meta := map[string]string{"arch": "l2", "note": `quotes " and <tags> & ünïcode`}
	var buf bytes.Buffer
	if err := Write(&buf, tensors, meta); err != nil {
		t.Fatal(err)
	}
	hdrLen := binary.LittleEndian.Uint64(buf.Bytes())
	if hdrLen%8 != 0 {
		t.Errorf("header length %d is not a multiple of 8", hdrLen)
	}
	got, gotMeta, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	assertTensorsEqual(t, got, tensors)
	assertMetadataEqual(t, gotMeta, meta)
}

func TestRoundTripFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.safetensors")
	tensors := sampleTensors()
	if err := WriteFile(path, tensors, nil); err != nil {
		t.Fatal(err)
	}
	got, meta, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	assertTensorsEqual(t, got, tensors)
	if meta != nil {
		t.Errorf("metadata %v, want nil when none was written", meta)
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries after WriteFile, want only the file", len(entries))
	}
}

func TestWriteFileFailureKeepsOldFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.safetensors")
	old := []Tensor{New("x", []int{1}, []float32{1})}
	if err := WriteFile(path, old, nil); err != nil {
		t.Fatal(err)
	}
	bad := []Tensor{New("x", []int{2}, []float32{1})}
	if err := WriteFile(path, bad, nil); err == nil {
		t.Fatal("WriteFile accepted a tensor whose shape does not match its data")
	}
	got, _, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	assertTensorsEqual(t, got, old)
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries after a failed WriteFile, want only the old file", len(entries))
	}
}

func TestData(t *testing.T) {
	x := New("x", []int{2}, []float64{1, 2})
	if d, err := Data[float64](x); err != nil || len(d) != 2 {
		t.Fatalf("Data[float64] = %v, %v", d, err)
	}
	if _, err := Data[float32](x); err == nil || !bytes.Contains([]byte(err.Error()), []byte(`"x"`)) {
		t.Fatalf("Data[float32] of an F64 tensor: error %v, want one naming the tensor", err)
	}
	lying := Tensor{Name: "y", Dtype: F32, Shape: []int{1}, Data: []float64{1}}
	if _, err := Data[float32](lying); err == nil {
		t.Fatal("Data accepted a tensor whose Data does not match its dtype")
	}
}

// TestChecksumIsCRC32COfTheFileBytes: Checksum is the CRC-32C of exactly the bytes a file
// holds for the tensor, for every dtype, and a change of one element changes it.
func TestChecksumIsCRC32COfTheFileBytes(t *testing.T) {
	for _, tn := range []Tensor{
		New("f32", []int{2, 3}, []float32{1, -2, 3.5, 0, 1e-30, 7}),
		New("f64", []int{3}, []float64{1, -2, 3.5}),
		New("i32", []int{2}, []int32{-1, 1 << 30}),
		New("i64", []int{2}, []int64{-1, 1 << 60}),
		New("u8", []int{4}, []uint8{0, 1, 254, 255}),
		New("scalar", nil, []float32{2}),
	} {
		var b bytes.Buffer
		if err := Write(&b, []Tensor{tn}, nil); err != nil {
			t.Fatal(err)
		}
		raw := b.Bytes()
		data := raw[8+binary.LittleEndian.Uint64(raw[:8]):]
		got, err := Checksum(tn)
		if err != nil {
			t.Fatal(err)
		}
		if want := crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli)); got != want {
			t.Errorf("%s: Checksum %08x, CRC-32C of its %d file bytes %08x", tn.Name, got, len(data), want)
		}
	}
	a, _ := Checksum(New("x", []int{2}, []float32{1, 2}))
	b, _ := Checksum(New("x", []int{2}, []float32{1, math.Nextafter32(2, 3)}))
	if a == b {
		t.Error("changing the last bit of an element left the checksum unchanged")
	}
	if _, err := Checksum(Tensor{Name: "bad", Dtype: F32, Shape: []int{3}, Data: []float32{1}}); err == nil || !strings.Contains(err.Error(), "bad") {
		t.Errorf("a tensor whose shape does not match its data: %v, want an error naming it", err)
	}
}
