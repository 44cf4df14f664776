package sweep

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"lipformer/model"
	"lipformer/spec"
	"lipformer/train"
)

func TestTableCells(t *testing.T) {
	nan := math.NaN()
	s := Spec{Cfg: model.Default(), Opt: train.DefaultOptions()}
	s.Cfg.Arch, s.Cfg.Layers, s.Opt.Seed = spec.DP, 12, 3
	pending := Row{Spec: s, Status: StatusPending, Steps: -1, FinalVal: nan, BestVal: nan, Test: nan, FirstNonFinite: -1,
		Spikes: -1, MaxGradNorm: nan, Seconds: nan}
	diverged := Row{Spec: s, Status: StatusNonFinite, Steps: 40, FinalVal: nan, BestVal: 3.21049, Test: nan, Diverged: true,
		FirstNonFinite: 40, Spikes: 2, MaxGradNorm: 12345.678, Seconds: 61.04}
	var csvOut, mdOut bytes.Buffer
	if err := WriteCSV(&csvOut, []Row{pending, diverged}); err != nil {
		t.Fatal(err)
	}
	want := "run,arch,depth,norm,seed,status,steps,final_val_bpc,best_val_bpc,test_bpc,diverged,first_nonfinite_step,loss_spikes,max_grad_norm,seconds\n" +
		"dp-L12-pre-s3,dp,12,pre,3,pending,,,,,,,,,\n" +
		"dp-L12-pre-s3,dp,12,pre,3,non-finite,40,,3.2105,,yes,40,2,1.235e+04,61.0\n"
	if csvOut.String() != want {
		t.Errorf("CSV:\n%s\nwant:\n%s", csvOut.String(), want)
	}
	if err := WriteMarkdown(&mdOut, []Row{diverged}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(mdOut.String(), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "| run | arch |") || !strings.HasPrefix(lines[1], "| --- |") ||
		lines[2] != "| dp-L12-pre-s3 | dp | 12 | pre | 3 | non-finite | 40 | – | 3.2105 | – | yes | 40 | 2 | 1.235e+04 | 61.0 |" {
		t.Errorf("Markdown:\n%s", mdOut.String())
	}
}

func TestBestValBPCFromTheLog(t *testing.T) {
	m := train.Metrics{Eval: []train.EvalRow{{Step: 2, ValLoss: 3}, {Step: 4, ValLoss: 2}, {Step: 6, ValLoss: math.NaN()}, {Step: 8, ValLoss: 2.5}}}
	if got := bestValBPC(m); got != 2/math.Ln2 {
		t.Errorf("best val bpc %g, want %g", got, 2/math.Ln2)
	}
	if got := bestValBPC(train.Metrics{}); !math.IsNaN(got) {
		t.Errorf("best val bpc without validations %g, want NaN", got)
	}
}
