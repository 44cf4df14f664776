package tightness

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"lipformer/data"
	"lipformer/model"
	"lipformer/spec"
	"lipformer/train"
)

// TestCertify trains l2 and dp models two steps and certifies their checkpoints: the
// certificate matches the training summary's, and a search gives lower bounds below the
// certified constants.
func TestCertify(t *testing.T) {
	path := filepath.Join(t.TempDir(), "text.txt")
	os.WriteFile(path, []byte(strings.Repeat("to be or not to be. ", 100)), 0o644)
	c, err := data.Load(context.Background(), path, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	o := defaults().Search
	for _, arch := range []spec.Arch{spec.L2, spec.DP} {
		m, err := model.New(model.Config{Arch: arch, Layers: 1, Heads: 1, Width: 8, Context: 8, Vocab: c.Vocab.Size(), Norm: spec.PreLN, Dtype: spec.Float32, Std: 0.02}, 1)
		if err != nil {
			t.Fatal(err)
		}
		opt := train.DefaultOptions()
		opt.Data, opt.Steps, opt.Batch, opt.Warmup, opt.EvalEvery = path, 2, 2, 0, 2
		out := t.TempDir()
		r := &train.Run{Model: m, Corpus: c, Opt: opt, Out: out, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Certify: true}
		sum, err := r.Train(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		loaded, _, err := model.Load(filepath.Join(out, "ckpt.safetensors"))
		if err != nil {
			t.Fatal(err)
		}
		var js bytes.Buffer
		certified, err := Certify(loaded, 0, o, 0, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.NewEncoder(&js).Encode(certified); err != nil {
			t.Fatal(err)
		}
		var cert struct {
			Inf     *float64 `json:"product_inf"`
			Factors []struct{ Name string }
		}
		if err := json.Unmarshal(js.Bytes(), &cert); err != nil {
			t.Fatal(err)
		}
		if len(cert.Factors) != 4 || (arch == spec.DP) != (cert.Inf == nil) {
			t.Fatalf("%s: certificate %s", arch, js.String())
		}
		if arch == spec.L2 && math.Abs(*cert.Inf-float64(sum.Certificate.Inf)) > 1e-6**cert.Inf {
			t.Errorf("certificate %v differs from the training summary's %v", *cert.Inf, sum.Certificate.Inf)
		}
		if arch != spec.L2 {
			continue
		}
		o.Starts, o.Steps = 2, 10
		var calls [][2]int
		searched, err := Certify(loaded, 4, o, 0, func(done, total int) { calls = append(calls, [2]int{done, total}) }, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := [][2]int{{1, 4}, {2, 4}, {3, 4}, {4, 4}} // 2 norms x 2 starts of the one layer
		if !slices.Equal(calls, want) {
			t.Errorf("progress calls %v, want %v", calls, want)
		}
		js.Reset()
		if err := json.NewEncoder(&js).Encode(searched); err != nil {
			t.Fatal(err)
		}
		var loose struct {
			Attention []struct {
				Name        string
				Lower       *struct{ Inf, Token2 float64 }
				CertInfAtN  float64 `json:"certified_inf_at_n"`
				CertTok2AtN float64 `json:"certified_token2_at_n"`
			}
		}
		if err := json.Unmarshal(js.Bytes(), &loose); err != nil {
			t.Fatal(err)
		}
		if len(loose.Attention) != 1 || loose.Attention[0].Lower == nil {
			t.Fatalf("looseness %s", js.String())
		}
		a := loose.Attention[0]
		if !(a.Lower.Inf > 0) || a.Lower.Inf > a.CertInfAtN || !(a.Lower.Token2 > 0) || a.Lower.Token2 > a.CertTok2AtN {
			t.Errorf("%s: lower bounds %+v against certified %v (inf) and %v (token2)", a.Name, *a.Lower, a.CertInfAtN, a.CertTok2AtN)
		}
		o.Starts, o.Steps = 1, 5
		var blocks [][2]int
		if searched, err = Certify(loaded, 4, o, 2, nil, func(done, total int) { blocks = append(blocks, [2]int{done, total}) }); err != nil {
			t.Fatal(err)
		}
		// 2 windows x the distinct (j, i) blocks of model.Model.LowerBound, counted one by one
		if n := len(blocks); n == 0 || n%2 != 0 || blocks[n-1] != [2]int{n, n} || blocks[0] != [2]int{1, n} {
			t.Errorf("whole-model progress calls %v, want 1..n of n, n even", blocks)
		}
		var table bytes.Buffer
		if err := searched.WriteTable(&table, "ckpt"); err != nil || !strings.Contains(table.String(), "token2 looseness") || !strings.Contains(table.String(), "whole model, token norm") {
			t.Errorf("table: %v\n%s", err, table.String())
		}
		if w := searched.Whole; w == nil || !(w.Best > 0) || w.Best > float64(searched.Tok2) || w.Windows != 2 {
			t.Errorf("whole-model lower bound %+v against the certified %v", w, searched.Tok2)
		}
	}
}

// TestSubBlockNote: the certificate's sub-block rows are labelled 1 + Lip(g) against the
// branch constant c, and a branch held to c that measures above it is named with the
// reason; a branch at c (to rounding) is not, nor are branches -lip-c does not hold.
func TestSubBlockNote(t *testing.T) {
	cert := &model.Certificate{Factors: []model.Factor{
		{Name: "h0.attn", Tok2: 1.9 + 1e-9}, {Name: "h0.mlp", Tok2: 1.92}, {Name: "lnf", Tok2: 300}, {Name: "head", Tok2: 2},
	}}
	cfg := model.Default()
	cfg.Arch, cfg.Norm, cfg.LipC = spec.InvertibleL2, spec.NoLN, 0.9
	note := subBlockNote(cert, cfg)
	for _, want := range []string{"residual sub-blocks x + g(x): certified 1 + Lip(g)", "to c = 0.9, their sub-blocks to 1 + c\n",
		"branches above c = 0.9 in the token norm: h0.mlp 0.92. ", "power-iteration estimates"} {
		if !strings.Contains(note, want) {
			t.Errorf("note:\n%s\nwant %q", note, want)
		}
	}
	if strings.Contains(note, "h0.attn 0.9") {
		t.Errorf("note:\n%s\nnames h0.attn, at c to rounding", note)
	}
	cfg.Arch, cfg.Norm = spec.ContractiveL2, spec.PreLN
	note = subBlockNote(cert, cfg)
	if !strings.Contains(note, "times its LayerNorm's factor") || !strings.Contains(note, "holds the attention branches") ||
		strings.Contains(note, "1 + c") || strings.Contains(note, "above c") {
		t.Errorf("contractive-l2, pre-LN: note:\n%s", note)
	}
	cfg.Mix = 4
	if note = subBlockNote(cert, cfg); !strings.HasPrefix(note, "h*.mix, h*.attn and h*.mlp") || !strings.Contains(note, "(h*.mix has none)") {
		t.Errorf("contractive-l2, pre-LN, mix: note:\n%s", note)
	}
	cfg.Arch, cfg.Norm = spec.InvertibleL2, spec.NoLN
	if note = subBlockNote(cert, cfg); !strings.HasPrefix(note, "h*.mix, ") || strings.Contains(note, "has none") {
		t.Errorf("invertible-l2, mix: note:\n%s", note)
	}
	// An invertible block's mixing branch is held to c as well; a plain block's is not.
	cert.Factors = append(cert.Factors, model.Factor{Name: "h1.mix", Tok2: 1.93})
	if note = subBlockNote(cert, cfg); !strings.Contains(note, "in the token norm: h0.mlp 0.92, h1.mix 0.93. ") {
		t.Errorf("invertible-l2, a mixing branch above c: note:\n%s", note)
	}
	cfg.Arch = spec.ContractiveL2
	if note = subBlockNote(cert, cfg); strings.Contains(note, "h1.mix 0.93") {
		t.Errorf("contractive-l2, no LayerNorm: note:\n%s\nnames the plain mixing branch", note)
	}
}
