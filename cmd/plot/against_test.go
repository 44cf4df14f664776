package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAgainstChart: bounded runs of one family form one series sorted by K with a point
// each, its legend naming the runs in that order, a run with a mixing sub-block, or with
// MaxMin, or n-byte tokens, is of another family, an unbounded run is a labelled line, the n-gram baselines come with a bpc metric
// only, and an unknown key or a summary without the metric is refused by name.
func TestAgainstChart(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	model := `"model": {"arch": "invertible-l2", "layers": 1, "heads": 1, "width": 4, "context": 4, "vocab": 5, "norm": "none", "lip_c": 0.25, "dtype": "float32", "init_std": 0.02, "embed_std": 0.1, "embed_radius": 1, "lip_k": %s}`
	run := func(k, bpc string) string {
		return "{" + strings.Replace(model, "%s", k, 1) + `, "final_val_bpc": ` + bpc + `, "final_val_acc": 0.3, "baselines": [{"order": 2, "bpc": 3.5}]}`
	}
	k10 := write("k10.json", run("10", "3.4"))
	k2 := write("k2.json", run("2", "3.6"))
	free := write("free.json", run("0", "3.0"))
	c, err := againstChart(strings.Join([]string{k10, free, k2}, ","), "lip_k", "final_val_bpc", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Series) != 1 || !slices.Equal(c.Series[0].X, []float64{2, 10}) || !slices.Equal(c.Series[0].Y, []float64{3.6, 3.4}) || !c.Series[0].Points {
		t.Fatalf("series %+v, want one family at K = 2, 10 with its points marked", c.Series)
	}
	if l := c.Series[0].Label; !strings.HasSuffix(l, ": k2, k10") {
		t.Errorf("legend %q, want the family's runs in the order of K", l)
	}
	if len(c.Refs) != 2 || c.Refs[0].Y != 3.0 || !strings.Contains(c.Refs[0].Label, "free") || c.Refs[1].Y != 3.5 {
		t.Errorf("reference lines %+v, want the unbounded run, then the bigram", c.Refs)
	}
	mix := write("k10-mix.json", strings.Replace(run("10", "3.3"), `"lip_c": 0.25`, `"lip_c": 0.25, "mix": 16`, 1))
	m, err := againstChart(strings.Join([]string{k10, mix, k2}, ","), "lip_k", "final_val_bpc", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Series) != 2 || !strings.Contains(m.Series[1].Label, "with mixing over 16 bytes") || !strings.HasSuffix(m.Series[1].Label, ": k10-mix") {
		t.Errorf("series %+v, want the run with mixing sub-blocks as a family of its own, named so", m.Series)
	}
	mm := write("k10-mm.json", strings.Replace(run("10", "3.2"), `"lip_c": 0.25`, `"lip_c": 0.25, "mix": 16, "activation": "maxmin"`, 1))
	if m, err = againstChart(strings.Join([]string{mix, mm}, ","), "lip_k", "final_val_bpc", ""); err != nil {
		t.Fatal(err)
	}
	if len(m.Series) != 2 || !strings.Contains(m.Series[1].Label, "with mixing over 16 bytes and MaxMin") {
		t.Errorf("series %+v, want the run with MaxMin as a family of its own, named so", m.Series)
	}
	pairs := write("k10-pairs.json", strings.Replace(run("10", "3.1"), `"lip_c": 0.25`, `"lip_c": 0.25, "token_bytes": 2`, 1))
	if m, err = againstChart(strings.Join([]string{k10, pairs}, ","), "lip_k", "final_val_bpc", ""); err != nil {
		t.Fatal(err)
	}
	if len(m.Series) != 2 || !strings.Contains(m.Series[1].Label, "2-byte tokens") {
		t.Errorf("series %+v, want the run with 2-byte tokens as a family of its own, named so", m.Series)
	}
	acc, err := againstChart(strings.Join([]string{k10, k2}, ","), "lip_k", "final_val_acc", "")
	if err != nil || len(acc.Refs) != 0 {
		t.Errorf("accuracy: %v, reference lines %+v, want no baselines", err, acc.Refs)
	}
	if _, err := againstChart(k10, "lip_q", "final_val_bpc", ""); err == nil || !strings.Contains(err.Error(), "lip_q") {
		t.Errorf("unknown key: %v", err)
	}
	if _, err := againstChart(write("none.json", `{"model": {"arch": "dp"}}`), "lip_k", "test_bpc", ""); err == nil || !strings.Contains(err.Error(), "test_bpc") {
		t.Errorf("a summary without the metric: %v", err)
	}
}
