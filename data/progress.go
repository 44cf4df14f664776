package data

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// newProgress returns a writer that counts the bytes written to it on a
// progress bar drawn on out, and a function that ends the bar. The bar is
// drawn only when out is a terminal and the CI environment variable is unset;
// otherwise, and when out is nil, the writer discards everything and the
// function does nothing.
func newProgress(out io.Writer, total int64, description string) (io.Writer, func()) {
	if !isInteractive(out) {
		return io.Discard, func() {}
	}
	return drawProgress(out, total, description)
}

// drawProgress is newProgress for a terminal out.
func drawProgress(out io.Writer, total int64, description string) (io.Writer, func()) {
	bar := progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(out),
		progressbar.OptionSetDescription(description),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(out) }),
	)
	return bar, func() {
		if !bar.IsFinished() {
			bar.Exit() // keeps the bar as it is and runs the completion above
		}
	}
}

// isInteractive reports whether out is a terminal that a person watches.
func isInteractive(out io.Writer) bool {
	f, ok := out.(*os.File)
	if !ok || f == nil || os.Getenv("CI") != "" {
		return false
	}
	return term.IsTerminal(int(f.Fd()))
}
