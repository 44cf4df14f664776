package data

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
)

// Options configures [Load]. The zero Options is ready to use.
type Options struct {
	// Dir is the data directory that holds downloaded corpora; "" means
	// [DefaultDir].
	Dir string
	// Enwik8URL and ShakespeareURL replace the canonical download
	// addresses [Enwik8URL] and [ShakespeareURL] when not "".
	Enwik8URL, ShakespeareURL string
	// Split cuts a corpus given by path, and the default corpus, into train,
	// valid and test parts; the zero Split means [DefaultSplit]. The named
	// corpora have fixed standard splits and reject any other Split.
	Split Split
	// Progress receives download and extraction progress bars. They are
	// drawn only when Progress is an *os.File on a terminal and the CI
	// environment variable is unset; nil means no bars.
	Progress io.Writer
	// Logger receives a line per download, extraction or verification; nil
	// means no logging.
	Logger *slog.Logger
}

// Names of the built-in corpora, as [Load] accepts them.
const (
	NameEnwik8      = "enwik8"
	NameShakespeare = "shakespeare"
	NameOpticks     = "opticks" // the default, also selected by ""
)

// DefaultDir returns the default data directory, lipformer inside the user's
// cache directory ($XDG_CACHE_HOME, else ~/.cache, on Linux).
func DefaultDir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("data: no default data directory: %w", err)
	}
	return filepath.Join(cache, "lipformer"), nil
}

// Load returns the corpus that spec names, as the -data flag passes it:
//
//   - "enwik8": enwik8 or enwik8.zip in the data directory, downloaded when
//     both are missing; standard split 90M/5M/5M bytes.
//   - "shakespeare": tinyshakespeare/input.txt in the data directory,
//     downloaded when missing; 90% train, 10% valid, the valid part also
//     serving as test.
//   - "" or "opticks": Newton's Opticks from the Go toolchain's source tree,
//     split by opt.Split.
//   - anything else: the path of a file, split by opt.Split. A file whose
//     name is one of the above can be given as "./enwik8".
//
// Named corpora are checked against their published size and SHA-256 each
// time they are read.
func Load(ctx context.Context, spec string, opt Options) (*Corpus, error) {
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	switch spec {
	case NameEnwik8:
		return loadRemote(ctx, spec, enwik8Corpus(orDefault(opt.Enwik8URL, Enwik8URL)), opt, log, func(path string, text []byte) (*Corpus, error) {
			return splitCorpus(spec, path, text, enwik8Split(), enwik8Origin)
		})
	case NameShakespeare:
		return loadRemote(ctx, spec, shakespeareCorpus(orDefault(opt.ShakespeareURL, ShakespeareURL)), opt, log, func(path string, text []byte) (*Corpus, error) {
			return splitTrainValid(spec, path, text, shakespeareOrigin)
		})
	case "", NameOpticks:
		path, err := findOpticks(ctx)
		if err != nil {
			return nil, err
		}
		return loadFile(NameOpticks, path, opt.Split, opticksOrigin)
	default:
		return loadFile(spec, spec, opt.Split, "file "+spec)
	}
}

// loadRemote reads a named corpus from the data directory, after
// downloading it if needed, verifies it and splits it with cut.
func loadRemote(ctx context.Context, name string, r remoteCorpus, opt Options, log *slog.Logger, cut func(path string, text []byte) (*Corpus, error)) (*Corpus, error) {
	if !opt.Split.isZero() {
		return nil, fmt.Errorf("data: corpus %q has a fixed standard split; a split (%s) applies only to the default corpus and to file paths", name, opt.Split)
	}
	dir := opt.Dir
	if dir == "" {
		var err error
		if dir, err = DefaultDir(); err != nil {
			return nil, err
		}
	}
	path, err := r.ensure(ctx, dir, opt.Progress, log)
	if err != nil {
		return nil, err
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	if err := verifyBytes(path, text, r.file); err != nil {
		return nil, fmt.Errorf("%w (remove it to download it again)", err)
	}
	log.Info("loaded corpus", "name", name, "path", path, "bytes", len(text))
	return cut(path, text)
}

// loadFile reads the corpus file at path and splits it by s.
func loadFile(name, path string, s Split, origin string) (*Corpus, error) {
	text, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("data: corpus file %s does not exist (the built-in corpora are %q, %q and %q or \"\")",
			path, NameEnwik8, NameShakespeare, NameOpticks)
	}
	if err != nil {
		return nil, fmt.Errorf("data: read corpus: %w", err)
	}
	return splitCorpus(name, path, text, s, origin)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
