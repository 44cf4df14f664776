// Package cli holds what lipformer's programs share: where progress bars go, how a
// checkpoint argument is resolved, and how a run's corpus is reloaded.
package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"lipformer/data"
	"lipformer/train"
)

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
