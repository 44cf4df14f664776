package safetensors

import (
	"encoding/json"
	"math"
	"os/exec"
	"path/filepath"
	"testing"
)

// pythonReader parses a safetensors file with nothing but json and numpy and
// prints {name: {"dtype", "shape", "values"}} plus the metadata as JSON.
const pythonReader = `
import json, struct, sys
import numpy as np
raw = open(sys.argv[1], "rb").read()
(n,) = struct.unpack("<Q", raw[:8])
header = json.loads(raw[8:8 + n])
data = raw[8 + n:]
kinds = {"F32": "<f4", "F64": "<f8", "I32": "<i4", "I64": "<i8", "U8": "u1"}
out = {"__metadata__": header.pop("__metadata__", {})}
for name, e in header.items():
    b, end = e["data_offsets"]
    a = np.frombuffer(data[b:end], dtype=kinds[e["dtype"]]).reshape(e["shape"])
    out[name] = {"dtype": e["dtype"], "shape": list(a.shape), "values": a.ravel().tolist()}
print(json.dumps(out))
`

// TestPythonReadsWrittenFile cross-checks the writer against an independent
// reader in Python. It runs only where python3 with numpy is installed.
func TestPythonReadsWrittenFile(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	if err := exec.Command(python, "-c", "import numpy").Run(); err != nil {
		t.Skip("python3 has no numpy")
	}
	tensors := []Tensor{
		New("w", []int{2, 3}, []float32{1.5, -2, 3.25, 1e-30, 7, -0.125}),
		New("b", []int{2}, []float64{math.Pi, -1e300}),
		New("step", []int{}, []int64{-1 << 40}),
		New("idx", []int{1, 1, 2}, []int32{-5, 1 << 30}),
		New("vocab", []int{3}, []uint8{'a', 0, 255}),
	}
	meta := map[string]string{"arch": "dp", "vocab": "ab\n"}
	path := filepath.Join(t.TempDir(), "x.safetensors")
	if err := WriteFile(path, tensors, meta); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(python, "-c", pythonReader, path).Output()
	if err != nil {
		t.Fatalf("python reader failed: %v", err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("python output %q: %v", out, err)
	}
	var gotMeta map[string]string
	if err := json.Unmarshal(got[metadataKey], &gotMeta); err != nil {
		t.Fatal(err)
	}
	assertMetadataEqual(t, gotMeta, meta)
	if len(got) != len(tensors)+1 {
		t.Fatalf("python saw %d header entries, want %d", len(got), len(tensors)+1)
	}
	for _, want := range tensors {
		var e struct {
			Dtype  Dtype
			Shape  []int
			Values []float64
		}
		if err := json.Unmarshal(got[want.Name], &e); err != nil {
			t.Fatalf("tensor %q: %v", want.Name, err)
		}
		if e.Dtype != want.Dtype || !shapeEqual(e.Shape, want.Shape) {
			t.Fatalf("tensor %q: python saw %s %v, want %s %v", want.Name, e.Dtype, e.Shape, want.Dtype, want.Shape)
		}
		if wantValues := asFloat64s(want.Data); !bitsEqual(e.Values, wantValues) {
			t.Fatalf("tensor %q: python saw %v, want %v", want.Name, e.Values, wantValues)
		}
	}
}

// asFloat64s converts Data to float64, which is exact for every supported
// element type in the values used here.
func asFloat64s(data any) []float64 {
	var out []float64
	switch d := data.(type) {
	case []float32:
		for _, x := range d {
			out = append(out, float64(x))
		}
	case []float64:
		out = append(out, d...)
	case []int32:
		for _, x := range d {
			out = append(out, float64(x))
		}
	case []int64:
		for _, x := range d {
			out = append(out, float64(x))
		}
	case []uint8:
		for _, x := range d {
			out = append(out, float64(x))
		}
	}
	return out
}
