//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sysmem

import "syscall"

// addressSpace is the soft address-space limit of the process, RLIMIT_AS.
func addressSpace() (uint64, error) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &r); err != nil {
		return 0, err
	}
	return uint64(r.Cur), nil
}
