package data

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// opticksFile is where the Go toolchain keeps Newton's Opticks (Project
// Gutenberg text, about 567 kB of English), relative to GOROOT.
const opticksFile = "src/testdata/Isaac.Newton-Opticks.txt"

// opticksOrigin describes the default corpus for [Corpus.Note].
const opticksOrigin = "Isaac Newton, Opticks (Project Gutenberg text shipped with the Go toolchain)"

// findOpticks returns the path of the default corpus in the Go toolchain,
// looking under runtime.GOROOT() and then under `go env GOROOT`.
// runtime.GOROOT is deprecated because the root of the build may not exist
// where the binary runs; the existence check below covers that case, and it
// saves starting the go command in the usual one.
func findOpticks(ctx context.Context) (string, error) {
	roots := []string{runtime.GOROOT()}
	if path, err := findUnderRoots(roots); err == nil {
		return path, nil
	}
	out, err := exec.CommandContext(ctx, "go", "env", "GOROOT").Output()
	if err == nil {
		roots = append(roots, strings.TrimSpace(string(out)))
	}
	return findUnderRoots(roots)
}

// findUnderRoots returns the first existing opticksFile under roots, which
// may contain empty strings (unknown roots) to skip.
func findUnderRoots(roots []string) (string, error) {
	var tried []string
	for _, root := range roots {
		if root == "" {
			continue
		}
		path := filepath.Join(root, filepath.FromSlash(opticksFile))
		ok, err := exists(path)
		if err != nil {
			return "", err
		}
		if ok {
			return path, nil
		}
		tried = append(tried, path)
	}
	if len(tried) == 0 {
		return "", fmt.Errorf("data: the default corpus is %s inside the Go toolchain, but GOROOT is unknown (runtime.GOROOT() is empty and `go env GOROOT` failed); pass the path of a text file, \"shakespeare\" or \"enwik8\" instead", opticksFile)
	}
	return "", fmt.Errorf("data: the default corpus %s of the Go toolchain is absent (tried %s); pass the path of a text file, \"shakespeare\" or \"enwik8\" instead",
		opticksFile, strings.Join(tried, ", "))
}
