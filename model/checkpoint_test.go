package model

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lipformer/safetensors"
)

func TestCheckpointRoundTrip(t *testing.T) {
	for _, v := range variants() {
		arch, cfg := v.name, v.cfg
		cfg.Dtype = "float32"
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
		if a.Loss() != b.Loss() {
			t.Errorf("%s: loss %v before saving, %v after loading", arch, a.Loss(), b.Loss())
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
