package model

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"lipformer/layers"
	"lipformer/safetensors"
	"lipformer/spec"
)

func TestCheckpointRoundTrip(t *testing.T) {
	for _, v := range variants() {
		arch, cfg := v.name, v.cfg
		cfg.Dtype = spec.Float32
		m, err := New(cfg, 7)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "ckpt.safetensors")
		vocab := []byte("abcdefg")
		extra := []safetensors.Tensor{safetensors.New("adam.m.x", []int{2}, []float32{1, 2})}
		if err := m.Save(path, vocab, extra, map[string]string{"step": "12"}); err != nil {
			t.Fatal(err)
		}
		m2, ck, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if m2.Cfg != m.Cfg || string(ck.Vocab) != "abcdefg" || len(ck.Extra) != 1 || ck.Extra[0].Name != "adam.m.x" {
			t.Fatalf("%s: round trip changed config, vocab or extras: %+v %q %v", arch, m2.Cfg, ck.Vocab, ck.Extra)
		}
		if step, err := ck.MetaInt("step"); err != nil || step != 12 {
			t.Fatalf("step metadata %v, %v", step, err)
		}
		a, b := mustProgram(t, m, Eval, 2), mustProgram(t, m2, Eval, 2)
		fill(a, 3, 7)
		copy(b.Inputs, a.Inputs)
		copy(b.Targets, a.Targets)
		if err := a.Run(); err != nil {
			t.Fatal(err)
		}
		if err := b.Run(); err != nil {
			t.Fatal(err)
		}
		if la, lb := mustLoss(t, a), mustLoss(t, b); la != lb {
			t.Errorf("%s: loss %v before saving, %v after loading", arch, la, lb)
		}
	}
}

func TestLoadRejectsBadFiles(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk")
	os.WriteFile(junk, []byte("not a checkpoint"), 0o644)
	if _, _, err := Load(junk); err == nil || !strings.Contains(err.Error(), junk) {
		t.Errorf("junk file: %v, want an error naming it", err)
	}
	other := filepath.Join(dir, "other.safetensors")
	safetensors.WriteFile(other, []safetensors.Tensor{safetensors.New("w", []int{1}, []float32{1})}, nil)
	if _, _, err := Load(other); err == nil || !strings.Contains(err.Error(), "not a lipformer checkpoint") {
		t.Errorf("foreign safetensors file: %v", err)
	}
	m, _ := New(tiny("dp"), 1)
	path := filepath.Join(dir, "ok.safetensors")
	if err := m.Save(path, []byte("abc"), nil, nil); err == nil {
		t.Error("a vocabulary of 3 bytes was saved for a model of 7 tokens")
	}
}

func TestGenerate(t *testing.T) {
	m, err := New(tiny("l2"), 5)
	if err != nil {
		t.Fatal(err)
	}
	d, err := m.NewDecoder()
	if err != nil {
		t.Fatal(err)
	}
	s := Sampling{Temperature: 0.8, TopK: 3, Window: Shift}
	a, err := Generate(d, []int{1, 2, 3}, 12, s, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(d, []int{1, 2, 3}, 12, s, rand.New(rand.NewPCG(1, 2)))
	if len(a) != 12 {
		t.Fatalf("got %d tokens, want 12", len(a))
	}
	for i := range a {
		if a[i] != b[i] || a[i] < 0 || a[i] >= 7 {
			t.Fatalf("same seed gave %v and %v", a, b)
		}
	}
	greedy := Sampling{Window: Slide}
	g1, _ := Generate(d, []int{4}, 8, greedy, nil)
	g2, _ := Generate(d, []int{4}, 8, greedy, nil)
	if len(g1) != 8 || g1[7] != g2[7] {
		t.Fatalf("greedy decoding is not deterministic: %v %v", g1, g2)
	}
}

func TestPickTopK(t *testing.T) {
	logits := []float64{0, 5, 1, 4}
	r := rand.New(rand.NewPCG(3, 3))
	for range 200 {
		if id := pick(logits, 1, 2, r.Float64()); id != 1 && id != 3 {
			t.Fatalf("top-2 drew token %d", id)
		}
	}
	if pick(logits, 0, 0, 0) != 1 {
		t.Fatal("greedy did not pick the largest logit")
	}
}

// savedTiny saves a tiny model of arch with a 7-byte vocabulary and returns the file.
func savedTiny(t *testing.T, arch string) string {
	t.Helper()
	m, err := New(tiny(arch), 3)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ckpt.safetensors")
	if err := m.Save(path, []byte("abcdefg"), nil, map[string]string{"step": "1"}); err != nil {
		t.Fatal(err)
	}
	return path
}

// rewrite replaces the checkpoint at path by what edit makes of its tensors and metadata.
func rewrite(t *testing.T, path string, edit func([]safetensors.Tensor, map[string]string) []safetensors.Tensor) {
	t.Helper()
	ts, meta, err := safetensors.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := safetensors.WriteFile(path, edit(ts, meta), meta); err != nil {
		t.Fatal(err)
	}
}

// wantLoadError loads path and fails unless the error names path and every part.
func wantLoadError(t *testing.T, path string, parts ...string) {
	t.Helper()
	_, _, err := Load(path)
	if err == nil {
		t.Fatalf("Load accepted the file; want an error mentioning %q", parts)
	}
	for _, p := range append(parts, path) {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not mention %q", err, p)
		}
	}
}

// TestLoadChecksEveryTensorOfTheModel: for every variant, a file that lacks any one tensor
// of the model, or stores one with another shape, or stores a further tensor in a model
// tensor's namespace (an option the config does not have), is refused naming the tensor;
// tensors named apart (the optimizer's) are kept as extras.
func TestLoadChecksEveryTensorOfTheModel(t *testing.T) {
	for _, v := range variants() {
		m, err := New(v.cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "ckpt.safetensors")
		extra := []safetensors.Tensor{safetensors.New("adam.m.tok", []int{2}, []float64{1, 2})}
		if err := m.Save(path, []byte("abcdefg"), extra, nil); err != nil {
			t.Fatal(err)
		}
		if _, ck, err := Load(path); err != nil || len(ck.Extra) != 1 {
			t.Fatalf("%s: %v, extras %d", v.name, err, len(ck.Extra))
		}
		stored := m.stored()
		for _, name := range []string{stored[0].name, stored[len(stored)/2].name, stored[len(stored)-1].name} {
			p := filepath.Join(t.TempDir(), "ckpt.safetensors")
			if err := m.Save(p, []byte("abcdefg"), nil, nil); err != nil {
				t.Fatal(err)
			}
			rewrite(t, p, func(ts []safetensors.Tensor, meta map[string]string) []safetensors.Tensor {
				delete(meta, MetaChecksums)
				return slices.DeleteFunc(ts, func(x safetensors.Tensor) bool { return x.Name == name })
			})
			wantLoadError(t, p, name)
		}
		p := filepath.Join(t.TempDir(), "ckpt.safetensors")
		if err := m.Save(p, []byte("abcdefg"), nil, nil); err != nil {
			t.Fatal(err)
		}
		rewrite(t, p, func(ts []safetensors.Tensor, meta map[string]string) []safetensors.Tensor {
			delete(meta, MetaChecksums)
			return append(ts, safetensors.New("h0.attn.extra", []int{1}, []float64{0}))
		})
		wantLoadError(t, p, "h0.attn.extra", "does not have")
	}
}

// TestLoadChecksConfigBeforeAllocating: a config whose sizes the stored tensors do not
// have is refused, naming the field and the tensor, before the model it describes is
// allocated (the lying configs below would take tens to hundreds of MB).
func TestLoadChecksConfigBeforeAllocating(t *testing.T) {
	for _, c := range []struct {
		name  string
		edit  func(*Config)
		parts []string
	}{
		{"width", func(c *Config) { c.Width = 1024 }, []string{"width 1024", "tensor tok", "[7 1024]", "[7 8]"}},
		{"context", func(c *Config) { c.Context = 1_000_000 }, []string{"context 1000000", "tensor pos", "[5 8]"}},
		{"hidden", func(c *Config) { c.Hidden = 100_000 }, []string{"hidden 100000", "tensor h0.mlp.fc.w", "[8 32]"}},
		{"layers", func(c *Config) { c.Layers = 10_000 }, []string{"layers 10000", "holds no tensor h2.attn.wq"}},
		{"fewer layers", func(c *Config) { c.Layers = 1 }, []string{"layers 1", "h1.attn.wq", "further block"}},
		{"tie", func(c *Config) { c.Tie = true }, []string{`"tie":true`, "head.w", "does not have"}},
		{"dtype", func(c *Config) { c.Dtype = spec.Float32 }, []string{"dtype float32", "tensor tok should be F32", "as F64"}},
		{"invalid", func(c *Config) { c.Heads = 3 }, []string{"width 8 with 3 heads"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := savedTiny(t, "dp")
			rewrite(t, path, func(ts []safetensors.Tensor, meta map[string]string) []safetensors.Tensor {
				var cfg Config
				if err := json.Unmarshal([]byte(meta[MetaConfig]), &cfg); err != nil {
					t.Fatal(err)
				}
				c.edit(&cfg)
				js, _ := json.Marshal(cfg)
				meta[MetaConfig] = string(js)
				return ts
			})
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			wantLoadError(t, path, c.parts...)
			runtime.ReadMemStats(&after)
			if mb := float64(after.TotalAlloc-before.TotalAlloc) / 1e6; mb > 5 {
				t.Errorf("Load allocated %.1f MB before refusing the config", mb)
			}
		})
	}
}

// TestLoadRefusesSizeTensorsAlone: a file that holds the tensors giving every size of the
// config but not the rest is refused naming the first tensor it lacks, and the model built
// to list the tensors is at most a few times the file.
func TestLoadRefusesSizeTensorsAlone(t *testing.T) {
	path := savedTiny(t, "dp")
	rewrite(t, path, func(ts []safetensors.Tensor, meta map[string]string) []safetensors.Tensor {
		delete(meta, MetaChecksums)
		var keep []safetensors.Tensor
		for _, x := range ts {
			if x.Name == "tok" || x.Name == "pos" || strings.HasSuffix(x.Name, ".attn.wq") || strings.HasSuffix(x.Name, ".mlp.fc.w") {
				keep = append(keep, x)
			}
		}
		return keep
	})
	wantLoadError(t, path, "h0.ln1.gain", "which the file does not hold")
}

// TestLoadRejectsVocabularyOfAnotherSize: Load refuses a vocabulary whose length is not the
// config's vocab, as Save does.
func TestLoadRejectsVocabularyOfAnotherSize(t *testing.T) {
	path := savedTiny(t, "l2")
	rewrite(t, path, func(ts []safetensors.Tensor, meta map[string]string) []safetensors.Tensor {
		meta[MetaVocab] = "[97,98,99]"
		return ts
	})
	wantLoadError(t, path, MetaVocab, "3 bytes", "config vocab is 7")
}

// TestLoadRejectsNonFiniteWeights: a NaN or an infinity among the weights is refused,
// naming the tensor and the first bad element.
func TestLoadRejectsNonFiniteWeights(t *testing.T) {
	for _, bad := range []float64{math.NaN(), math.Inf(-1)} {
		m, err := New(tiny("l2"), 3)
		if err != nil {
			t.Fatal(err)
		}
		w := m.Blocks[1].(*layers.Block).MLP.Proj.W.Value.Data().([]float64) // (32, 8)
		w[8*3+5], w[8*4] = bad, bad
		path := filepath.Join(t.TempDir(), "ckpt.safetensors")
		if err := m.Save(path, []byte("abcdefg"), nil, nil); err != nil {
			t.Fatal(err)
		}
		wantLoadError(t, path, "tensor h1.mlp.proj.w", "element 29 (index [3 5])", fmt.Sprint(bad))
	}
}

// dataStart is the offset of the data section of the safetensors file b.
func dataStart(b []byte) int { return 8 + int(binary.LittleEndian.Uint64(b[:8])) }

// TestLoadDetectsAFlippedBit: Save stores a checksum of every tensor, so that one flipped
// bit in a tensor's data is found and the tensor named; a file without checksums (as
// written before them) still loads.
func TestLoadDetectsAFlippedBit(t *testing.T) {
	path := savedTiny(t, "dp")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// the data section starts with tok (7 x 8 float64), then pos: flip the lowest bit of pos[0, 1]
	i := dataStart(b) + 7*8*8 + 8
	b[i] ^= 1
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	wantLoadError(t, path, "tensor pos is corrupt", MetaChecksums)

	b[i] ^= 1 // the extra tensors are covered too
	os.WriteFile(path, b, 0o644)
	m, ck, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	extra := []safetensors.Tensor{safetensors.New("adam.m.x", []int{2}, []float32{1, 2})}
	if err := m.Save(path, ck.Vocab, extra, ck.Meta); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	b[len(b)-1] ^= 0x80
	os.WriteFile(path, b, 0o644)
	wantLoadError(t, path, "tensor adam.m.x is corrupt")

	old := savedTiny(t, "dp")
	rewrite(t, old, func(ts []safetensors.Tensor, meta map[string]string) []safetensors.Tensor {
		delete(meta, MetaChecksums)
		return ts
	})
	if _, _, err := Load(old); err != nil {
		t.Fatalf("a checkpoint without checksums: %v", err)
	}
	b, _ = os.ReadFile(old)
	b[dataStart(b)] ^= 1
	os.WriteFile(old, b, 0o644)
	if _, _, err := Load(old); err != nil {
		t.Fatalf("a checkpoint without checksums, one bit flipped (undetectable): %v", err)
	}
}

// TestLoadRejectsBadChecksumMetadata: checksums that do not cover the file's tensors
// exactly are refused.
func TestLoadRejectsBadChecksumMetadata(t *testing.T) {
	path := savedTiny(t, "dp")
	rewrite(t, path, func(ts []safetensors.Tensor, meta map[string]string) []safetensors.Tensor {
		return append(ts, safetensors.New("added", []int{1}, []float32{1}))
	})
	wantLoadError(t, path, "tensor added has no checksum")
	path = savedTiny(t, "dp")
	rewrite(t, path, func(ts []safetensors.Tensor, meta map[string]string) []safetensors.Tensor {
		return slices.DeleteFunc(ts, func(x safetensors.Tensor) bool { return x.Name == "h0.mlp.fc.b" })
	})
	wantLoadError(t, path, "checksum for tensor h0.mlp.fc.b, which the file does not hold")
}
