package safetensors

import (
	"bytes"
	"testing"
)

// FuzzRead checks that no input makes Read panic, and that whatever it
// accepts survives a write and a second read unchanged. Without -fuzz it runs
// the seeds only.
func FuzzRead(f *testing.F) {
	f.Add(goldenFile())
	f.Add(assemble(`{"a":{"dtype":"U8","shape":[3],"data_offsets":[0,3]},"b":{"dtype":"I32","shape":[0],"data_offsets":[3,3]}}`, []byte{1, 2, 3}))
	f.Add(assemble(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`, make([]byte, 12)))
	f.Add(assemble(`{"__metadata__":{"k":"v"}}`, nil))
	f.Fuzz(func(t *testing.T, file []byte) {
		tensors, meta, err := Read(bytes.NewReader(file))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := Write(&buf, tensors, meta); err != nil {
			t.Fatalf("writing what Read accepted: %v", err)
		}
		again, againMeta, err := Read(&buf)
		if err != nil {
			t.Fatalf("reading what Write wrote: %v", err)
		}
		assertTensorsEqual(t, again, tensors)
		assertMetadataEqual(t, againMeta, meta)
	})
}
