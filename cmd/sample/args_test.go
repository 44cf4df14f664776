package main

import (
	"testing"

	"lipformer/internal/clitest"
)

// TestHelpAndExtraArguments: -h and -help print the usage alone, and positional arguments
// are refused with the message every program gives.
func TestHelpAndExtraArguments(t *testing.T) {
	clitest.HelpAndExtraArguments(t, "sample", "prompt", []string{"-ckpt", "nowhere"}, run)
}
