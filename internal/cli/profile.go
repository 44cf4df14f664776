package cli

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// StartCPUProfile starts writing a CPU profile (for go tool pprof) to path and returns
// the function that stops it and closes the file. Errors name the -cpuprofile flag.
func StartCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("-cpuprofile %s: %w", path, err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
