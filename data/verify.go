package data

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
)

// checkedFile is a file known by its name in the data directory, its size
// and its SHA-256.
type checkedFile struct {
	name   string // path relative to the data directory
	size   int64
	sha256 string // lower-case hex
}

// checkSHA256Hex returns want in lower case, or an error (to be wrapped) if
// it is not 64 hex digits.
func checkSHA256Hex(want string) (string, error) {
	want = strings.ToLower(want)
	if b, err := hex.DecodeString(want); err != nil || len(b) != sha256.Size {
		return "", fmt.Errorf("expected SHA-256 %q is not 64 hex digits", want)
	}
	return want, nil
}

// verifyContent compares the size and SHA-256 of content that was read from
// (or written to) the file named file.
// A size of wantSize+1 stands for "more than wantSize", since readers stop there.
func verifyContent(file string, size int64, sum []byte, wantSize int64, wantSHA256 string) error {
	if size > wantSize {
		return fmt.Errorf("data: %s: size is more than the expected %d bytes", file, wantSize)
	}
	if size != wantSize {
		return fmt.Errorf("data: %s: size is %d bytes, expected %d", file, size, wantSize)
	}
	if got := hex.EncodeToString(sum); got != wantSHA256 {
		return fmt.Errorf("data: %s: SHA-256 is %s, expected %s", file, got, wantSHA256)
	}
	return nil
}

// verifyFile checks the file at path against want, reading it only when its
// size is right.
func verifyFile(path string, want checkedFile) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("data: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("data: %w", err)
	}
	if info.Size() != want.size {
		return fmt.Errorf("data: %s: size is %d bytes, expected %d", path, info.Size(), want.size)
	}
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return fmt.Errorf("data: read %s: %w", path, err)
	}
	return verifyContent(path, n, h.Sum(nil), want.size, want.sha256)
}
