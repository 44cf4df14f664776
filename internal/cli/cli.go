// Package cli holds what lipformer's programs share: how the command line is parsed and
// checked, where progress bars go, how a checkpoint argument is resolved, and how a run's
// corpus is reloaded.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"lipformer/data"
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

// Logger logs human-readable lines to w.
func Logger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// CheckpointPath resolves a -ckpt argument: a run directory means its latest checkpoint.
func CheckpointPath(arg string) (string, error) {
	if arg == "" {
		return "", fmt.Errorf("-ckpt is required: a run directory or a checkpoint file")
	}
	st, err := os.Stat(arg)
	if err != nil {
		return "", fmt.Errorf("-ckpt %s: %w", arg, err)
	}
	if st.IsDir() {
		return filepath.Join(arg, train.LatestFile), nil
	}
	return arg, nil
}

// CheckpointCorpus loads the corpus a checkpoint was trained on: stored is the -data value
// saved in the checkpoint at ckptPath, split its split string. A relative file path is
// looked up as given, against the current directory, and then against the run directory
// (the directory of the checkpoint file); the first that exists is loaded. When neither
// does, the error says that the path came from the checkpoint, where it was looked for,
// and that -data names the corpus instead.
func CheckpointCorpus(ctx context.Context, stored, split, ckptPath, dataDir string, log *slog.Logger) (*data.Corpus, error) {
	spec := stored
	if isRelativeFile(stored) {
		here, err := exists(stored)
		if err != nil {
			return nil, err
		}
		if !here {
			inRun := filepath.Join(filepath.Dir(ckptPath), stored)
			there, err := exists(inRun)
			if err != nil {
				return nil, err
			}
			if !there {
				cwd, _ := os.Getwd()
				return nil, fmt.Errorf("corpus file %s, a relative path stored in checkpoint %s, exists neither in the current directory (%s) nor in the run directory (%s): give the corpus with -data PATH",
					stored, ckptPath, filepath.Join(cwd, stored), inRun)
			}
			if log != nil {
				log.Info("corpus found in the run directory", "stored", stored, "path", inRun)
			}
			spec = inRun
		}
	}
	return LoadCorpus(ctx, spec, split, dataDir, log)
}

// isRelativeFile reports whether a -data value is a relative file path rather than the
// name of a built-in corpus or an absolute path.
func isRelativeFile(spec string) bool {
	switch spec {
	case "", data.NameEnwik8, data.NameShakespeare, data.NameOpticks:
		return false
	}
	return !filepath.IsAbs(spec)
}

// exists reports whether path exists (as any kind of file); an error other than absence
// is returned.
func exists(path string) (bool, error) {
	_, err := os.Stat(path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("corpus file: %w", err)
}

// LoadCorpus loads the corpus named by spec with an optional split string ("" keeps the
// corpus's default), downloading into dataDir ("" for the default) when needed.
func LoadCorpus(ctx context.Context, spec, split, dataDir string, log *slog.Logger) (*data.Corpus, error) {
	opt := data.Options{Dir: dataDir, Progress: Progress(os.Stderr), Logger: log}
	if split != "" {
		s, err := data.ParseSplit(split)
		if err != nil {
			return nil, fmt.Errorf("-split: %w", err)
		}
		opt.Split = s
	}
	return data.Load(ctx, spec, opt)
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
