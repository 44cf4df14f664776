package train

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"lipformer/data"
)

// MetaDataPath is the metadata key of the absolute path of the corpus file of a run whose
// corpus spec (Options.Data) is a relative path, so that the run can be resumed, and its
// checkpoints scored, from another directory (ResolveCorpus).
const MetaDataPath = "lipformer.data_path"

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

// ResolveCorpus returns the spec that loads the corpus of the checkpoint at ckptPath:
// stored is the corpus spec saved in it (Options.Data), recorded the absolute path saved
// beside it (MetaDataPath; "" when absent). The name of a built-in corpus or an absolute
// path is stored itself. A relative path is looked up at the recorded path, then as
// given, against the current directory, then against the run directory (the directory of
// the checkpoint file); the first that exists is returned. When none does, the error says
// that the path came from the checkpoint and where it was looked for; a caller adds how
// to name the corpus instead.
func ResolveCorpus(stored, recorded, ckptPath string, log *slog.Logger) (string, error) {
	if !isRelativeFile(stored) {
		return stored, nil
	}
	inRun := filepath.Join(filepath.Dir(ckptPath), stored)
	var where string
	for _, c := range []struct{ path, where string }{
		{recorded, "at the path recorded in the checkpoint"},
		{stored, "in the current directory"},
		{inRun, "in the run directory"},
	} {
		if c.path == "" {
			continue
		}
		ok, err := fileExists(c.path)
		if err != nil {
			return "", fmt.Errorf("corpus file: %w", err)
		}
		if ok {
			if c.path != stored && log != nil {
				log.Info("corpus found "+c.where, "stored", stored, "path", c.path)
			}
			return c.path, nil
		}
	}
	if recorded != "" {
		where = fmt.Sprintf(" nor at the path recorded in the checkpoint (%s)", recorded)
	}
	abs, _ := filepath.Abs(stored)
	return "", fmt.Errorf("corpus file %s, a relative path stored in checkpoint %s, exists neither in the current directory (%s) nor in the run directory (%s)%s",
		stored, ckptPath, abs, inRun, where)
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

// corpusMeta returns the metadata that records the absolute path of the run's corpus
// file (MetaDataPath), when its spec is a relative path; nil otherwise.
func (r *Run) corpusMeta() (map[string]string, error) {
	if !isRelativeFile(r.Opt.Data) {
		return nil, nil
	}
	abs, err := filepath.Abs(r.Corpus.Path)
	if err != nil {
		return nil, fmt.Errorf("corpus %s: %w", r.Corpus.Path, err)
	}
	return map[string]string{MetaDataPath: abs}, nil
}
