package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"lipformer/data"
	"lipformer/model"
	"lipformer/ngram"
	"lipformer/spec"
	"lipformer/train"
)

// TestEvalLogitBall: a model bounded end to end reports its certified logit radius (its
// certificate times its token vectors' radius, at most K r with the embeddings in the
// ball of radius r) and never scores below the floor there; -logit-radius adds radii,
// whose floors fall as they grow; the human output names the certified one. A model not
// bounded reports nothing without the flag. -bounded-order 4 adds the bounded 4-gram. Bad
// radii and orders are refused naming the flag.
func TestEvalLogitBall(t *testing.T) {
	const k, r = 2.0, 1.0
	out := trainedRunOf(t, model.Config{Arch: spec.InvertibleL2, Layers: 1, Heads: 2, Width: 16, Context: 16, Norm: spec.NoLN, LipC: 0.25,
		Dtype: spec.Float32, Std: 0.02, EmbedStd: 0.1, LipK: k, EmbedRadius: r}.WithCertifiedRecipe(), 40)
	eval := func(dir string, args ...string) (string, error) {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append([]string{"-ckpt", dir, "-split", "valid"}, args...), &stdout, &stderr)
		return stdout.String(), err
	}
	text, err := eval(out, "-json", "-logit-radius", "0.5,50")
	if err != nil {
		t.Fatal(err)
	}
	var res result
	if err := json.Unmarshal([]byte(text), &res); err != nil {
		t.Fatal(err)
	}
	b := res.LogitBall
	if len(b) != 3 || !b[0].Certified || b[1].Certified || b[1].Radius != 0.5 || b[2].Radius != 50 {
		t.Fatalf("logit ball %+v, want the certified radius, then 0.5 and 50", b)
	}
	m, ck, err := model.Load(res.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	// The floor at 0.5 from the valid split grouped here by offset: target j (the
	// split's byte j, j >= 1) sits at offset (j-1) mod T of consecutive windows.
	id, _, err := train.StoredCorpus(ck.Meta)
	if err != nil {
		t.Fatal(err)
	}
	c, err := data.Load(context.Background(), id.Path, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	groups := make([][]byte, m.Cfg.Context)
	for j := 1; j < len(c.Valid); j++ {
		groups[(j-1)%m.Cfg.Context] = append(groups[(j-1)%m.Cfg.Context], c.Valid[j])
	}
	if want, err := ngram.Floor(groups, c.Vocab.Bytes(), 0.5); err != nil || math.Abs(b[1].FloorBPC-want) > 1e-9 {
		t.Errorf("floor at 0.5: %.8f, want %.8f from the split grouped by offset (error %v)", b[1].FloorBPC, want, err)
	}
	cert, err := m.Certificate()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := b[0].Radius, float64(cert.LogitRadius); math.Abs(got-want) > 1e-12*want || got > k*r*(1+1e-3) || !(got > 0) {
		t.Errorf("certified logit radius %v, want the certificate's %v, at most K r = %v", got, want, k*r)
	}
	if !(b[0].FloorBPC <= res.BPC) {
		t.Errorf("the model scores %.4f bpc, below the floor %.4f of its certified radius", res.BPC, b[0].FloorBPC)
	}
	if !(b[2].FloorBPC < b[0].FloorBPC && b[0].FloorBPC < b[1].FloorBPC) {
		t.Errorf("floors %.4f (radius %.3g), %.4f (0.5), %.4f (50): want them falling as the radius grows", b[0].FloorBPC, b[0].Radius, b[1].FloorBPC, b[2].FloorBPC)
	}
	for _, x := range b {
		if len(x.Bounded) != 2 || x.Bounded[0].Order != 2 || x.Bounded[1].Order != 3 || !(x.Bounded[0].BPC >= x.FloorBPC) {
			t.Errorf("bounded models %+v at radius %v: want a bigram and a trigram, not below the floor %.4f", x.Bounded, x.Radius, x.FloorBPC)
		}
	}
	if text, err = eval(out, "-json", "-logit-radius", "2", "-bounded-order", "4"); err != nil {
		t.Fatal(err)
	}
	var four result
	if err := json.Unmarshal([]byte(text), &four); err != nil {
		t.Fatal(err)
	}
	for _, x := range four.LogitBall {
		if len(x.Bounded) != 3 || x.Bounded[2].Order != 4 || !(x.Bounded[2].BPC >= x.FloorBPC) {
			t.Errorf("-bounded-order 4: bounded models %+v at radius %v, want orders 2 to 4, not below the floor %.4f", x.Bounded, x.Radius, x.FloorBPC)
		}
	}
	for _, v := range []string{"1", "9"} {
		if _, err := eval(out, "-logit-radius", "2", "-bounded-order", v); err == nil || !strings.Contains(err.Error(), "-bounded-order") {
			t.Errorf("-bounded-order %s: error %v, want one naming the flag", v, err)
		}
	}
	text, err = eval(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"logit radius", "the certified one", "scores below", "bounded count models: bigram"} {
		if !strings.Contains(text, want) {
			t.Errorf("output %q, want %q", text, want)
		}
	}
	plain := trainedRun(t, 1, 2)
	if text, err := eval(plain, "-json"); err != nil || strings.Contains(text, "logit_ball") {
		t.Errorf("a model not bounded, no flag: output %q, error %v; want no logit ball", text, err)
	}
	if text, err := eval(plain, "-json", "-logit-radius", "3"); err != nil || !strings.Contains(text, `"logit_ball":[{"radius":3,"certified":false`) {
		t.Errorf("a model not bounded, -logit-radius 3: output %q, error %v", text, err)
	}
	for _, v := range []string{"0", "-1", "x", "Inf"} {
		if _, err := eval(out, "-logit-radius", v); err == nil || !strings.Contains(err.Error(), "-logit-radius") {
			t.Errorf("-logit-radius %s: error %v, want one naming the flag", v, err)
		}
	}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"-data", "x.txt", "-ngram", "2", "-logit-radius", "1"}, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "-logit-radius needs -ckpt") {
		t.Errorf("-logit-radius without -ckpt: error %v", err)
	}
}

// TestOffsetGroups: every scored target lands in the group of its offset in its window:
// all offsets with consecutive windows, only the last S after the first window with a
// stride S.
func TestOffsetGroups(t *testing.T) {
	tokens := make([]uint8, 50)
	for i := range tokens {
		tokens[i] = uint8(i)
	}
	for _, c := range []struct{ ctx, stride int }{{8, 8}, {8, 3}, {8, 1}} {
		g, err := offsetGroups(tokens, c.ctx, c.stride)
		if err != nil {
			t.Fatal(err)
		}
		seen := make(map[byte]int)
		for off, targets := range g {
			for _, y := range targets {
				seen[y]++
				// target y is token y, at position y-1 of the split; window 0 covers
				// positions 0..ctx-1, later windows their last stride positions.
				p := int(y) - 1
				want := p
				if p >= c.ctx {
					w := (p-c.ctx)/c.stride + 1
					want = p - w*c.stride
				}
				if off != want {
					t.Errorf("context %d, stride %d: target %d in group %d, want %d", c.ctx, c.stride, y, off, want)
				}
			}
		}
		if len(seen) != len(tokens)-1 || seen[0] != 0 {
			t.Errorf("context %d, stride %d: %d distinct targets, want every token but the first once", c.ctx, c.stride, len(seen))
		}
		for y, n := range seen {
			if n != 1 {
				t.Errorf("target %d scored %d times", y, n)
			}
		}
	}
	if _, err := offsetGroups(tokens[:1], 8, 8); err == nil {
		t.Error("one token: no error")
	}
}
