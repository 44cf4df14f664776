package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"lipformer/model"
	"lipformer/train"
)

func TestInts(t *testing.T) {
	got, err := Ints("-n", "2, 8,32")
	if err != nil || !slices.Equal(got, []int{2, 8, 32}) {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, bad := range []string{"2,x", "0", "-3", ""} {
		if _, err := Ints("-n", bad); err == nil || !strings.Contains(err.Error(), "-n") {
			t.Errorf("%q: error %v, want one naming -n", bad, err)
		}
	}
}

func TestBarOnlyOnATerminal(t *testing.T) {
	if b := Bar(&bytes.Buffer{}, 10, "items"); b != nil {
		t.Error("a progress bar was drawn on a buffer")
	}
}

// flags is a flag set with a float, an int and a string flag, writing its usage to out.
func flags(out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("prog", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Float64("temperature", 0.8, "softmax temperature")
	fs.Float64("lr", 1e-3, "learning rate")
	fs.Int("n", 1, "count")
	fs.String("name", "x", "a name")
	return fs
}

func TestCheckFiniteNamesTheFlag(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{"-temperature NaN", "-temperature NaN: want a finite number"},
		{"-temperature nan", "-temperature NaN"},
		{"-lr Inf", "-lr +Inf: want a finite number"},
		{"-lr -infinity -n 3", "-lr -Inf"},
		{"-lr 1e400", `invalid value "1e400" for flag -lr`}, // the flag package refuses an overflow itself
	} {
		err := Parse(flags(io.Discard), strings.Fields(c.args))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.args, err, c.want)
		}
	}
	if err := Parse(flags(io.Discard), []string{"-temperature", "0", "-lr", "-1e300", "-name", "NaN"}); err != nil {
		t.Errorf("finite values (and a string flag reading NaN): %v", err)
	}
}

func TestParseRefusesPositionalArguments(t *testing.T) {
	err := Parse(flags(io.Discard), []string{"-n", "2", "extra", "-lr", "1"})
	want := `unexpected arguments ["extra" "-lr" "1"]: prog takes only flags (-h lists them)`
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	fs := flags(io.Discard)
	if err := ParseArgs(fs, []string{"-n", "2", "a.jsonl", "b.jsonl"}); err != nil || fs.NArg() != 2 {
		t.Errorf("ParseArgs: %v, %d arguments; want them kept", err, fs.NArg())
	}
	if err := ParseArgs(flags(io.Discard), []string{"-lr", "NaN", "a"}); err == nil || !strings.Contains(err.Error(), "-lr") {
		t.Errorf("ParseArgs with -lr NaN: %v", err)
	}
}

func TestParseHelpReturnsErrHelpAfterTheUsage(t *testing.T) {
	for _, h := range []string{"-h", "-help", "--help"} {
		var out bytes.Buffer
		err := Parse(flags(&out), []string{h})
		if !errors.Is(err, flag.ErrHelp) {
			t.Errorf("%s: error %v, want flag.ErrHelp", h, err)
		}
		if s := out.String(); !strings.Contains(s, "Usage of prog") || !strings.Contains(s, "-temperature") || strings.Contains(s, "help requested") {
			t.Errorf("%s printed %q, want the usage alone", h, s)
		}
	}
}

// TestCheckpointCorpus: a relative corpus path stored in a checkpoint is looked up in the
// current directory, then in the run directory, and the error when it is in neither says
// where it came from and names -data.
func TestCheckpointCorpus(t *testing.T) {
	text := []byte(strings.Repeat("the quick brown fox. ", 20))
	runDir := t.TempDir()
	ckpt := filepath.Join(runDir, "ckpt.safetensors")
	t.Chdir(t.TempDir())
	_, err := CheckpointCorpus(context.Background(), "", train.Options{Data: "shk.txt"}, train.CorpusID{}, ckpt, "", nil)
	for _, want := range []string{"corpus file shk.txt", "relative path stored in checkpoint " + ckpt, filepath.Join(runDir, "shk.txt"), "-data"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing corpus: error %v, want one containing %q", err, want)
		}
	}
	if err := os.WriteFile(filepath.Join(runDir, "shk.txt"), text, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := CheckpointCorpus(context.Background(), "", train.Options{Data: "shk.txt"}, train.CorpusID{}, ckpt, "", nil)
	if err != nil || c.Path != filepath.Join(runDir, "shk.txt") {
		t.Fatalf("corpus in the run directory: %v, %+v", err, c)
	}
	if err := os.WriteFile("shk.txt", text[:200], 0o644); err != nil {
		t.Fatal(err)
	}
	c, err = CheckpointCorpus(context.Background(), "", train.Options{Data: "shk.txt"}, train.CorpusID{}, ckpt, "", nil)
	if err != nil || c.Path != "shk.txt" || len(c.Train)+len(c.Valid)+len(c.Test) != 200 {
		t.Fatalf("corpus in the current directory: %v, %+v; want it before the run directory's", err, c)
	}
}

// TestSavedCorpus: the corpus a checkpoint's options name is loaded when its vocabulary is
// the checkpoint's, and refused, naming the corpus and the checkpoint, when it is not; a
// checkpoint without training options is refused by name.
func TestSavedCorpus(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.WriteFile("shk.txt", []byte(strings.Repeat("the quick brown fox. ", 20)), 0o644); err != nil {
		t.Fatal(err)
	}
	meta := map[string]string{train.MetaTrain: `{"data":"shk.txt"}`}
	ckpt := filepath.Join(t.TempDir(), "ckpt.safetensors")
	c, err := SavedCorpus(context.Background(), "", &model.Checkpoint{Vocab: []byte(" .bcefhiknoqrtuwx"), Meta: meta}, ckpt, "", nil)
	if err != nil || c.Path != "shk.txt" {
		t.Fatalf("the checkpoint's own corpus: %v, %+v", err, c)
	}
	_, err = SavedCorpus(context.Background(), "", &model.Checkpoint{Vocab: []byte("abc"), Meta: meta}, ckpt, "", nil)
	for _, want := range []string{"corpus shk.txt has another vocabulary", ckpt, "17 and 3 bytes"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("another vocabulary: error %v, want one containing %q", err, want)
		}
	}
	if _, err := SavedCorpus(context.Background(), "", &model.Checkpoint{Meta: map[string]string{}}, ckpt, "", nil); err == nil || !strings.Contains(err.Error(), ckpt) {
		t.Errorf("no training options: error %v, want one naming %s", err, ckpt)
	}
}
