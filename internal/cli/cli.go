// Package cli holds the command-line glue lipformer's programs share: how the command line
// is parsed and checked, where logs and progress bars go, and how a -ckpt or -data
// argument becomes a checkpoint file or a corpus (the run directory itself is package
// train's RunDir).
package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"lipformer/data"
	"lipformer/internal/sysmem"
	"lipformer/model"
	"lipformer/train"
)

// Parse parses args with flags for a program that takes no positional arguments, and
// checks what every program checks: no positional argument remains (NoArgs) and every
// float flag is finite (CheckFinite). On -h or -help, flags prints its usage and Parse
// returns flag.ErrHelp, which a program's main treats as success.
func Parse(flags *flag.FlagSet, args []string) error {
	if err := ParseArgs(flags, args); err != nil {
		return err
	}
	return NoArgs(flags)
}

// ParseArgs is Parse for a program that takes positional arguments: it leaves them in
// flags.Args().
func ParseArgs(flags *flag.FlagSet, args []string) error {
	if err := flags.Parse(args); err != nil {
		return err
	}
	return CheckFinite(flags)
}

// NoArgs returns an error listing the positional arguments left after flags were parsed,
// if any: every program reads its settings from flags alone.
func NoArgs(flags *flag.FlagSet) error {
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: %s takes only flags (-h lists them)", flags.Args(), flags.Name())
	}
	return nil
}

// CheckFinite returns an error naming the first float64 flag of flags, in lexical order,
// whose value is NaN or infinite: strconv.ParseFloat, which the flag package uses, accepts
// "NaN" and "Inf", which no setting of these programs means.
func CheckFinite(flags *flag.FlagSet) error {
	var err error
	flags.VisitAll(func(f *flag.Flag) {
		g, ok := f.Value.(flag.Getter)
		if !ok || err != nil {
			return
		}
		if x, ok := g.Get().(float64); ok && (math.IsNaN(x) || math.IsInf(x, 0)) {
			err = fmt.Errorf("-%s %v: want a finite number", f.Name, x)
		}
	})
	return err
}

// Progress returns f when progress bars should be drawn on it (a terminal, outside CI),
// and nil otherwise.
func Progress(f *os.File) io.Writer {
	if os.Getenv("CI") != "" || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return f
}

// Reporter shows the progress of long work on w: a progress bar when Progress would draw
// on w, else a line on log every train.DefaultProgressEvery.
func Reporter(w io.Writer, log *slog.Logger) train.Reporter {
	r := train.Reporter{Log: log, Every: train.DefaultProgressEvery}
	if f, ok := w.(*os.File); ok {
		r.Bar = Progress(f)
	}
	return r
}

// Logger logs human-readable lines to w.
func Logger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// CheckpointPath resolves a -ckpt argument: a run directory means its latest checkpoint
// (train.CheckpointFile).
func CheckpointPath(arg string) (string, error) {
	if arg == "" {
		return "", fmt.Errorf("-ckpt is required: a run directory or a checkpoint file")
	}
	path, err := train.CheckpointFile(arg)
	if err != nil {
		return "", fmt.Errorf("-ckpt %s: %w", arg, err)
	}
	return path, nil
}

// CheckpointCorpus loads the corpus a checkpoint was trained on, or the one that spec
// names when it is not "". The checkpoint's training options opt give the -data value
// stored and the split; id is the corpus identity the checkpoint stores (the zero
// CorpusID when it stores none). A stored relative file path is looked up as
// train.ResolveCorpus does (against the current directory, at the absolute path stored,
// then in the run directory); when none has it, the error says where it came from and
// that -data names the corpus instead. A named corpus is looked for in dataDir, or when
// that is "" in the data directory stored (CorpusID.DataDir), or the default. A corpus
// whose size or SHA-256 differs from the stored ones is logged as a warning: the scores
// are then of another text (WarnOtherCorpus).
func CheckpointCorpus(ctx context.Context, spec string, opt train.Options, id train.CorpusID, ckptPath, dataDir string, log *slog.Logger) (*data.Corpus, error) {
	if spec == "" {
		var err error
		if spec, err = train.ResolveCorpus(opt.Data, id.Path, ckptPath, log); err != nil {
			return nil, fmt.Errorf("%w: give the corpus with -data PATH", err)
		}
	}
	if dataDir == "" {
		dataDir = id.DataDir
	}
	c, err := LoadCorpus(ctx, spec, opt.Split, dataDir, log)
	if err != nil {
		return nil, err
	}
	WarnOtherCorpus(log, id, c, ckptPath)
	return c, nil
}

// SavedCorpus loads the corpus of the checkpoint ck, read from ckptPath: CheckpointCorpus
// with the training options and corpus identity ck stores, or spec when it is not "". A
// corpus whose vocabulary is not the checkpoint's is refused, naming both: its token ids
// would stand for other bytes.
func SavedCorpus(ctx context.Context, spec string, ck *model.Checkpoint, ckptPath, dataDir string, log *slog.Logger) (*data.Corpus, error) {
	opt, err := train.TrainOptions(ck)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ckptPath, err)
	}
	id, _, err := train.StoredCorpus(ck.Meta)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ckptPath, err)
	}
	c, err := CheckpointCorpus(ctx, spec, opt, id, ckptPath, dataDir, log)
	if err != nil {
		return nil, err
	}
	if string(c.Vocab.Bytes()) != string(ck.Vocab) {
		return nil, fmt.Errorf("corpus %s has another vocabulary than the checkpoint %s (%d and %d bytes)", c.Name, ckptPath, c.Vocab.Size(), len(ck.Vocab))
	}
	return c, nil
}

// WarnOtherCorpus logs a warning when the corpus c differs in size or SHA-256 from the
// identity id stored in the checkpoint at ckptPath, naming the file and both sizes and
// hashes; a zero id (a checkpoint that stores none) is not compared. log may be nil.
func WarnOtherCorpus(log *slog.Logger, id train.CorpusID, c *data.Corpus, ckptPath string) {
	if log == nil || id.SHA256 == "" || id.Same(c) {
		return
	}
	log.Warn("the corpus is not the text the checkpoint was trained on: the scores are of another text",
		"checkpoint", ckptPath, "file", c.Path, "bytes", c.Size, "sha256", c.SHA256,
		"stored_file", id.Path, "stored_bytes", id.Bytes, "stored_sha256", id.SHA256)
}

// LoadCorpus loads the corpus named by spec with an optional split string ("" keeps the
// corpus's default), downloading into dataDir ("" for the default) with a progress bar
// on a terminal when needed (train.LoadCorpus).
func LoadCorpus(ctx context.Context, spec, split, dataDir string, log *slog.Logger) (*data.Corpus, error) {
	return train.LoadCorpus(ctx, spec, split, data.Options{Dir: dataDir, Progress: Progress(os.Stderr), Logger: log})
}

// Ints parses a comma-separated list of positive integers given to the named flag.
func Ints(flag, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("%s: %q is not a positive integer", flag, f)
		}
		out = append(out, v)
	}
	return out, nil
}

// PositiveFloats parses a comma-separated list of finite positive numbers given to the
// named flag.
func PositiveFloats(flag, s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 1) {
			return nil, fmt.Errorf("%s: %q is not a finite positive number", flag, f)
		}
		out = append(out, v)
	}
	return out, nil
}

// Bar is a progress bar over n items named desc, drawn on w when Progress would draw on
// it; nil otherwise.
func Bar(w io.Writer, n int, desc string) *progressbar.ProgressBar {
	f, ok := w.(*os.File)
	if !ok || Progress(f) == nil {
		return nil
	}
	return progressbar.NewOptions(n, progressbar.OptionSetWriter(w), progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true), progressbar.OptionSetPredictTime(true), progressbar.OptionSetDescription(desc))
}

// Alias registers old on flags as a deprecated name of the flag name, sharing its value:
// commands recorded with the old name still run. name must be registered first.
func Alias(flags *flag.FlagSet, old, name string) {
	f := flags.Lookup(name)
	flags.Var(f.Value, old, "deprecated name of -"+name)
}

// CheckMemory refuses work whose estimated memory need exceeds what this process may use
// (sysmem: the memory available, the address-space limit and the cgroup limit), with an
// error that gives the estimate and the limit; what names the work ("training").
func CheckMemory(what string, need model.Memory) error {
	lim, err := sysmem.System().Find()
	if err != nil {
		return fmt.Errorf("memory limit: %w", err)
	}
	return sysmem.Fits(what, need, lim)
}
