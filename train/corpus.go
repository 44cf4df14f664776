package train

import (
	"context"
	"encoding/json"
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
			return nil, fmt.Errorf("fractions: %w", err) // the flag that sets them
		}
		opt.Split = s
	}
	return data.Load(ctx, spec, opt)
}

// MetaCorpus is the checkpoint metadata key of the identity of the run's corpus (JSON
// CorpusID).
const MetaCorpus = "lipformer.corpus"

// CorpusID identifies the text a run was trained on and says where it was: the file's
// absolute path, the absolute data directory of a named corpus, and the size and SHA-256
// of the bytes read. Every checkpoint stores it (MetaCorpus) and so does the summary; a
// resume refuses a corpus of another size or hash (Run.Train), which the vocabulary alone
// cannot tell (the same bytes in another order have the same vocabulary).
type CorpusID struct {
	Path    string `json:"path"`               // absolute path of the file read
	DataDir string `json:"data_dir,omitempty"` // absolute data directory of a named corpus (enwik8, shakespeare)
	Bytes   int    `json:"bytes"`
	SHA256  string `json:"sha256"`
}

// IdentifyCorpus returns the identity of c, with its paths made absolute (against the
// current directory) when they can be.
func IdentifyCorpus(c *data.Corpus) CorpusID {
	id := CorpusID{Path: absolute(c.Path), Bytes: c.Size, SHA256: c.SHA256}
	if c.Dir != "" {
		id.DataDir = absolute(c.Dir)
	}
	return id
}

// absolute is path made absolute, or path itself when that fails.
func absolute(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// StoredCorpus reads the corpus identity stored in a checkpoint's metadata; ok is false
// when the checkpoint has none (it was written before corpus identities were stored).
func StoredCorpus(meta map[string]string) (id CorpusID, ok bool, err error) {
	s, ok := meta[MetaCorpus]
	if !ok {
		return id, false, nil
	}
	if err := json.Unmarshal([]byte(s), &id); err != nil {
		return id, false, fmt.Errorf("metadata %s: %w", MetaCorpus, err)
	}
	return id, true, nil
}

// Same reports whether c holds the text that id identifies: the same number of bytes and
// the same SHA-256.
func (id CorpusID) Same(c *data.Corpus) bool { return c.Size == id.Bytes && c.SHA256 == id.SHA256 }

// Differs describes how c differs from the text that id identifies, naming the file
// read and the stored and found sizes and hashes; "" when it is the same text.
func (id CorpusID) Differs(c *data.Corpus) string {
	if id.Same(c) {
		return ""
	}
	return fmt.Sprintf("corpus file %s has %d bytes, SHA-256 %s; the run was trained on %d bytes, SHA-256 %s (read from %s)",
		c.Path, c.Size, c.SHA256, id.Bytes, id.SHA256, id.Path)
}

// ResolveCorpus returns the spec that loads the corpus of the checkpoint at ckptPath,
// whose saved corpus spec (Options.Data) is stored and the absolute path of whose file
// (CorpusID.Path) is abs, "" when the checkpoint has none. The name of a built-in corpus
// or an absolute path is stored itself. A relative path is looked up as given, against
// the current directory, then at abs, then against the run directory (the directory of
// the checkpoint file); the first that exists is returned. When none does, the error
// says that the path came from the checkpoint and every place it was looked for; a caller
// adds how to name the corpus instead.
func ResolveCorpus(stored, abs, ckptPath string, log *slog.Logger) (string, error) {
	if !isRelativeFile(stored) {
		return stored, nil
	}
	here, _ := filepath.Abs(stored)
	inRun := filepath.Join(filepath.Dir(ckptPath), stored)
	inRunAbs, _ := filepath.Abs(inRun)
	candidates := []string{stored}
	if abs != "" && abs != here && abs != inRunAbs {
		candidates = append(candidates, abs)
	}
	candidates = append(candidates, inRun)
	for i, path := range candidates {
		ok, err := fileExists(path)
		switch {
		case err != nil:
			return "", fmt.Errorf("corpus file: %w", err)
		case !ok:
			continue
		case i > 0 && log != nil:
			log.Info("corpus found elsewhere than the current directory", "stored", stored, "path", path)
		}
		return path, nil
	}
	where := fmt.Sprintf("the current directory (%s)", here)
	if len(candidates) == 3 {
		where += fmt.Sprintf(", the absolute path stored with it (%s)", abs)
	}
	return "", fmt.Errorf("corpus file %s, a relative path stored in checkpoint %s, exists neither in %s nor in the run directory (%s)",
		stored, ckptPath, where, inRun)
}

// isRelativeFile reports whether a corpus spec is a relative file path rather than the
// name of a built-in corpus or an absolute path.
func isRelativeFile(spec string) bool { return !data.IsNamed(spec) && !filepath.IsAbs(spec) }
