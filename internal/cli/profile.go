package cli

import (
	"fmt"
	"os"
	"runtime/pprof"
	"runtime/trace"
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

// StartTrace starts writing an execution trace (for go tool trace) to path and returns
// the function that stops it and closes the file. Errors name the -trace flag.
func StartTrace(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("-trace: %w", err)
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("-trace %s: %w", path, err)
	}
	return func() {
		trace.Stop()
		f.Close()
	}, nil
}
