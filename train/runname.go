package train

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"lipformer/data"
)

// RunName is the default name of a run directory: the experiment's configuration name
// (the base of a -config file, or ""), the architecture and the corpus (the name of a
// built-in one, the base of a file without its extension), each once, and the start time
// to the minute: contractive-l2-opticks-20261202-0735, shakespeare-dp-20261202-0735.
// Characters other than letters, digits, '.', '_' and '-' become '_'.
func RunName(config, arch, corpus string, start time.Time) string {
	if corpus == "" {
		corpus = data.NameOpticks
	}
	if !data.IsNamed(corpus) {
		corpus = strings.TrimSuffix(filepath.Base(corpus), filepath.Ext(corpus))
	}
	var parts []string
	for _, p := range []string{strings.TrimSuffix(filepath.Base(config), filepath.Ext(config)), arch, corpus} {
		if p = safeName(p); p != "" && p != "." && !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	return strings.Join(append(parts, start.Format("20060102-1504")), "-")
}

// safeName replaces the characters of s other than letters, digits, '.', '_' and '-' by
// '_'.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, s)
}

// NewRunDir returns the path root/name, or when that exists root/name-2, root/name-3, ...:
// the first that does not exist, for a new run.
func NewRunDir(root, name string) (string, error) {
	for i := 1; ; i++ {
		path := filepath.Join(root, name)
		if i > 1 {
			path = fmt.Sprintf("%s-%d", path, i)
		}
		_, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return path, nil
		}
		if err != nil {
			return "", err
		}
	}
}
