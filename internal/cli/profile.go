package cli

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"runtime/trace"
)

// StartCPUProfile starts writing a CPU profile (for go tool pprof) to path and returns
// the function that stops it and closes the file. Errors name the -cpuprofile flag.
func StartCPUProfile(path string) (stop func(), err error) {
	return startRecording("-cpuprofile", path, pprof.StartCPUProfile, pprof.StopCPUProfile)
}

// StartTrace starts writing an execution trace (for go tool trace) to path and returns
// the function that stops it and closes the file. Errors name the -trace flag.
func StartTrace(path string) (stop func(), err error) {
	return startRecording("-trace", path, trace.Start, trace.Stop)
}

// startRecording creates path, starts a recording into it and returns the function that
// stops the recording and closes the file; errors name flag.
func startRecording(flag, path string, start func(io.Writer) error, end func()) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	if err := start(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s %s: %w", flag, path, err)
	}
	return func() {
		end()
		f.Close()
	}, nil
}
