package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"lipformer/model"
	"lipformer/spec"
)

// TestEvalRadius: on a model bounded by K, -radius reports for each R the fraction of the
// scored bytes certified at R, falling with R, never below the fraction certified by K
// alone nor above it with the right byte required; the median certified radius is
// positive and splits the bytes; -radius-curve adds a falling curve; the human output has
// the table. Bad radii are refused naming the flag.
func TestEvalRadius(t *testing.T) {
	out := trainedRunOf(t, model.Config{Arch: spec.InvertibleL2, Layers: 1, Heads: 2, Width: 16, Context: 16, Norm: spec.BallPre, LipC: 0.5,
		Dtype: spec.Float32, Std: 0.02, EmbedStd: 1, LipK: 10}.WithCertifiedRecipe(), 2)
	eval := func(args ...string) (string, error) {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append([]string{"-ckpt", out, "-split", "valid"}, args...), &stdout, &stderr)
		return stdout.String(), err
	}
	text, err := eval("-json", "-radius", "1e-6,0.01,1000", "-radius-curve", "7")
	if err != nil {
		t.Fatal(err)
	}
	var res result
	if err := json.Unmarshal([]byte(text), &res); err != nil {
		t.Fatal(err)
	}
	r := res.Radius
	if r == nil || len(r.Points) != 3 || len(r.Curve) != 7 || r.Scored != res.Bytes || r.Unbounded != "" {
		t.Fatalf("radius %+v, want 3 points and 7 of a curve over %d bytes", r, res.Bytes)
	}
	if !(r.MedianRadius > 0) || !(r.MedianRadiusWhole > 0) || r.MedianRadiusWhole > r.MedianRadius || !(r.Certificate > 0) || r.Certificate > 10.5 {
		t.Errorf("median radii %v (per class), %v (K alone), K = %v; want 0 < K alone <= per class, K at most 10 (up to the power iterations)", r.MedianRadius, r.MedianRadiusWhole, r.Certificate)
	}
	for i, p := range append(r.Points, r.Curve...) {
		if p.CertifiedWhole > p.Certified || p.CertifiedCorrect > p.Certified || p.Certified > 1 || p.CertifiedWhole < 0 {
			t.Errorf("point %d %+v: want 0 <= from K alone, certified and right <= certified <= 1", i, p)
		}
	}
	if p := r.Points; !(p[0].Certified > p[1].Certified) || p[2].Certified != 0 || p[0].Certified < 0.9 {
		t.Errorf("points %+v, want most bytes certified at 1e-6, fewer at 0.01, none at 1000", p)
	}
	for i := 1; i < len(r.Curve); i++ {
		if !(r.Curve[i].R > r.Curve[i-1].R) || r.Curve[i].Certified > r.Curve[i-1].Certified {
			t.Errorf("curve %+v: want R rising and the fraction falling", r.Curve)
		}
	}
	at := func(R string) float64 {
		text, err := eval("-json", "-radius", R)
		if err != nil {
			t.Fatal(err)
		}
		var res result
		if err := json.Unmarshal([]byte(text), &res); err != nil {
			t.Fatal(err)
		}
		return res.Radius.Points[0].Certified
	}
	if below, above := at(strconv.FormatFloat(0.999*float64(r.MedianRadius), 'g', -1, 64)), at(strconv.FormatFloat(1.001*float64(r.MedianRadius), 'g', -1, 64)); !(below >= 0.5) || !(above <= 0.5) {
		t.Errorf("certified just below the median radius %v, just above %v: want >= 0.5 and <= 0.5", below, above)
	}
	text, err = eval("-radius", "0.01")
	if err != nil {
		t.Fatal(err)
	}
	if !(r.NearestBytes > 0) || !(r.FarthestBytes > r.NearestBytes) || r.AnySubstitution.R != r.FarthestBytes {
		t.Errorf("bytes %v to %v apart, any substitution %+v", r.NearestBytes, r.FarthestBytes, r.AnySubstitution)
	}
	for _, want := range []string{"certified radius in the token norm of the input embeddings", "median", "certified and right", "0.01 ", "whatever bytes of the window are replaced"} {
		if !strings.Contains(text, want) {
			t.Errorf("output %q, want %q", text, want)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-radius", "0"}, "-radius"},
		{[]string{"-radius", "-1"}, "-radius"},
		{[]string{"-radius", "0.1,x"}, "-radius"},
		{[]string{"-radius", "Inf"}, "-radius"},
		{[]string{"-radius-curve", "-1"}, "-radius-curve"},
		{[]string{"-radius", "0.1", "-ablate", "attention"}, "-radius"},
	} {
		if _, err := eval(c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one naming %s", c.args, err, c.want)
		}
	}
}

// TestEvalRadiusOfAnInfiniteCertificate: a dot-product model has no certificate: every
// radius is 0, no byte is certified at any R, and the output says why.
func TestEvalRadiusOfAnInfiniteCertificate(t *testing.T) {
	out := trainedRunOf(t, model.Config{Arch: spec.DP, Layers: 1, Heads: 2, Width: 16, Context: 16, Norm: spec.PreLN, Dtype: spec.Float32, Std: 0.02}, 2)
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"-ckpt", out, "-split", "valid", "-radius", "1e-9", "-radius-curve", "5"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if want := "certified radius: 0 at every byte: the certificate is infinite (h0.attn: dp attention is not Lipschitz"; !strings.Contains(stdout.String(), want) {
		t.Errorf("output %q, want %q", stdout.String(), want)
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"-ckpt", out, "-split", "valid", "-radius", "1e-9", "-radius-curve", "5", "-json"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	var res result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	r := res.Radius
	if r == nil || r.MedianRadius != 0 || r.Points[0].Certified != 0 || r.Curve != nil || !strings.Contains(r.Unbounded, "h0.attn") {
		t.Errorf("radius %+v, want median 0, nothing certified, no curve, h0.attn named", r)
	}
}
