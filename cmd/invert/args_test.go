package main

import (
	"context"
	"io"
	"testing"

	"lipformer/internal/clitest"
)

// TestHelpAndExtraArguments: -h and -help print the usage alone, and positional arguments
// are refused with the message every program gives.
func TestHelpAndExtraArguments(t *testing.T) {
	clitest.HelpAndExtraArguments(t, "invert", "spread", []string{"-ckpt", "nowhere"}, func(args []string, stdout, stderr io.Writer) error {
		return run(context.Background(), args, stdout, stderr)
	})
}
