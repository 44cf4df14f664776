package data

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
)

// MaxCorpusBytes is the largest corpus file that [Load] reads: 4 GiB, about 43
// times enwik8. A larger file, or a path that is not a regular file (a
// directory, a device such as /dev/urandom, a named pipe), is refused before
// anything is read from it.
const MaxCorpusBytes int64 = 4 << 30

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

// IsNamed reports whether spec names a built-in corpus ("enwik8",
// "shakespeare", "opticks" or "") rather than a file.
func IsNamed(spec string) bool {
	switch spec {
	case "", NameEnwik8, NameShakespeare, NameOpticks:
		return true
	}
	return false
}

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
//   - "enwik8": enwik8 or enwik8.zip in the data directory or in its folder
//     enwik8, downloaded when all are missing; standard split 90M/5M/5M bytes.
//   - "shakespeare": tinyshakespeare/input.txt in the data directory,
//     downloaded when missing; 90% train, 10% valid, the valid part also
//     serving as test.
//   - "" or "opticks": Newton's Opticks from the Go toolchain's source tree,
//     split by opt.Split.
//   - anything else: the path of a file, split by opt.Split. A file whose
//     name is one of the above can be given as "./enwik8".
//
// enwik8 and its archive are also looked for in the folder enwik8 of the data
// directory (DATA/enwik8/enwik8), and a download that fails names every path
// that was looked for. Named corpora are checked against their published size
// and SHA-256 each time they are read; every corpus records its size and
// SHA-256 ([Corpus.Size], [Corpus.SHA256]). Every corpus must be a regular file (symbolic links
// are followed) of at most [MaxCorpusBytes] bytes.
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
	text, err := readCorpusFile(path)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(text)
	if err := verifyContent(path, int64(len(text)), sum[:], r.file.size, r.file.sha256); err != nil {
		return nil, fmt.Errorf("%w (remove it to download it again)", err)
	}
	log.Info("loaded corpus", "name", name, "path", path, "bytes", len(text))
	c, err := cut(path, text)
	if err != nil {
		return nil, err
	}
	c.SHA256, c.Dir = hex.EncodeToString(sum[:]), dir
	return c, nil
}

// loadFile reads the corpus file at path and splits it by s.
func loadFile(name, path string, s Split, origin string) (*Corpus, error) {
	text, err := readCorpusFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("data: corpus file %s does not exist (the built-in corpora are %q, %q and %q or \"\")",
			path, NameEnwik8, NameShakespeare, NameOpticks)
	}
	if err != nil {
		return nil, err
	}
	c, err := splitCorpus(name, path, text, s, origin)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(text)
	c.SHA256 = hex.EncodeToString(sum[:])
	return c, nil
}

// readCorpusFile reads the corpus file at path after checking, before reading
// anything, that it is a regular file of at most MaxCorpusBytes bytes. The
// bytes read are bounded by the size found then, so a file that grows while
// it is read is refused rather than read without end. An error wraps
// fs.ErrNotExist when path does not exist.
func readCorpusFile(path string) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("data: corpus file: %w", err)
	}
	if err := checkCorpusInfo(path, info); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data: corpus file: %w", err)
	}
	defer f.Close()
	if info, err = f.Stat(); err != nil { // the file opened, which may have replaced the one checked
		return nil, fmt.Errorf("data: corpus file: %w", err)
	}
	if err := checkCorpusInfo(path, info); err != nil {
		return nil, err
	}
	buf := make([]byte, info.Size()+1) // one byte more shows a file that grew
	n, err := io.ReadFull(f, buf)
	switch {
	case err == nil:
		return nil, fmt.Errorf("data: corpus file %s grew past its size of %d bytes while it was read", path, info.Size())
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return buf[:n:n], nil
	}
	return nil, fmt.Errorf("data: read corpus file %s: %w", path, err)
}

// checkCorpusInfo refuses a corpus file that is not a regular file or holds
// more than MaxCorpusBytes bytes, naming it and what it is.
func checkCorpusInfo(path string, info fs.FileInfo) error {
	if !info.Mode().IsRegular() {
		return fmt.Errorf("data: corpus file %s is not a regular file: it is %s (give the path of a text file)", path, fileKind(info.Mode()))
	}
	limit := min(MaxCorpusBytes, int64(math.MaxInt-1))
	if info.Size() > limit {
		return fmt.Errorf("data: corpus file %s has %d bytes, more than the limit of %d bytes (%.1f GiB) that a corpus may have",
			path, info.Size(), limit, float64(limit)/(1<<30))
	}
	return nil
}

// fileKind names the type of a file that is not regular.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return fmt.Sprintf("an irregular file (mode %v)", m)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
