package model

import (
	"lipformer/spec"
	"slices"
	"strings"
	"testing"
)

func TestFindPresets(t *testing.T) {
	ps, err := FindPresets("p2, tiny")
	if err != nil || len(ps) != 2 || ps[0].Name != "P2" || ps[1].Name != "tiny" {
		t.Errorf("FindPresets(p2, tiny) = %v, %v", ps, err)
	}
	if _, err := FindPresets("P1,P9"); err == nil || !strings.Contains(err.Error(), `unknown configuration "P9", want some of P1, P2, P3, tiny`) {
		t.Errorf("unknown preset: %v", err)
	}
	c := ps[0].Config(spec.L2, spec.Float64)
	if c.Arch != spec.L2 || c.Dtype != spec.Float64 || c.Layers != 4 || c.Context != 64 || c.Vocab != 65 || c.Dropout != 0 || c.Norm != Default().Norm {
		t.Errorf("P2's l2 float64 config: %+v", c)
	}
}

func TestRandomBatch(t *testing.T) {
	in, tg := RandomBatch(3, 2, 5, 7)
	in2, tg2 := RandomBatch(3, 2, 5, 7)
	if !slices.Equal(in, in2) || !slices.Equal(tg, tg2) {
		t.Fatal("the batch depends on more than its seed")
	}
	for b := 0; b < 2; b++ {
		for i := 0; i < 4; i++ {
			if in[b*5+i+1] != tg[b*5+i] {
				t.Errorf("row %d: inputs %v, targets %v: targets are not the next inputs", b, in[b*5:b*5+5], tg[b*5:b*5+5])
			}
		}
	}
	for _, v := range append(in, tg...) {
		if v < 0 || v >= 7 {
			t.Fatalf("token %d outside the vocabulary", v)
		}
	}
}
