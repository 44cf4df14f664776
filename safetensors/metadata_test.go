package safetensors

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestReadMetadataFile: the metadata reads back without the tensors, and a file whose
// data section is cut short is refused as ReadFile refuses it.
func TestReadMetadataFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.safetensors")
	meta := map[string]string{"a": "1", "b": `{"x":2}`}
	if err := WriteFile(path, []Tensor{New("w", []int{2, 3}, []float32{1, 2, 3, 4, 5, 6})}, meta); err != nil {
		t.Fatal(err)
	}
	got, err := ReadMetadataFile(path)
	if err != nil || !reflect.DeepEqual(got, meta) {
		t.Fatalf("metadata %v, %v; want %v", got, err, meta)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b[:len(b)-4], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadMetadataFile(path); err == nil || !strings.Contains(err.Error(), "data section") || !strings.Contains(err.Error(), path) {
		t.Errorf("truncated file: error %v, want one about the data section naming the file", err)
	}
	if _, err := ReadMetadataFile(filepath.Join(t.TempDir(), "none")); !os.IsNotExist(err) && !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: error %v", err)
	}
}
