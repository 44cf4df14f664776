package train

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"lipformer/data"
)

// LoadCorpus loads the corpus named by spec with a split string ("" keeps the corpus's
// default; Options.Split), as data.Load does with opt.
func LoadCorpus(ctx context.Context, spec, split string, opt data.Options) (*data.Corpus, error) {
	if split != "" {
		s, err := data.ParseSplit(split)
		if err != nil {
			return nil, fmt.Errorf("split: %w", err)
		}
		opt.Split = s
	}
	return data.Load(ctx, spec, opt)
}

// ResolveCorpus returns the spec that loads the corpus of the checkpoint at ckptPath,
// whose saved corpus spec (Options.Data) is stored. The name of a built-in corpus or an
// absolute path is stored itself. A relative path is looked up as given, against the
// current directory, and then against the run directory (the directory of the checkpoint
// file); the first that exists is returned. When neither does, the error says that the
// path came from the checkpoint and where it was looked for; a caller adds how to name
// the corpus instead.
func ResolveCorpus(stored, ckptPath string, log *slog.Logger) (string, error) {
	if !isRelativeFile(stored) {
		return stored, nil
	}
	here, err := fileExists(stored)
	switch {
	case err != nil:
		return "", fmt.Errorf("corpus file: %w", err)
	case here:
		return stored, nil
	}
	inRun := filepath.Join(filepath.Dir(ckptPath), stored)
	there, err := fileExists(inRun)
	if err != nil {
		return "", fmt.Errorf("corpus file: %w", err)
	}
	if !there {
		abs, _ := filepath.Abs(stored)
		return "", fmt.Errorf("corpus file %s, a relative path stored in checkpoint %s, exists neither in the current directory (%s) nor in the run directory (%s)",
			stored, ckptPath, abs, inRun)
	}
	if log != nil {
		log.Info("corpus found in the run directory", "stored", stored, "path", inRun)
	}
	return inRun, nil
}

// isRelativeFile reports whether a corpus spec is a relative file path rather than the
// name of a built-in corpus or an absolute path.
func isRelativeFile(spec string) bool {
	switch spec {
	case "", data.NameEnwik8, data.NameShakespeare, data.NameOpticks:
		return false
	}
	return !filepath.IsAbs(spec)
}
