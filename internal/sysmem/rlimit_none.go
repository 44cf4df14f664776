//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package sysmem

import "math"

// addressSpace is no limit where there is no RLIMIT_AS.
func addressSpace() (uint64, error) { return math.MaxUint64, nil }
