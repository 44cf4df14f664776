// Package sysmem finds how much memory a process may use, so that a program can refuse a
// configuration that would not fit before it allocates it, instead of growing until the
// kernel or the Go runtime kills it.
package sysmem

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"

	"lipformer/model"
)

// Limit is the memory a process may use, in bytes, and what sets it.
type Limit struct {
	Bytes  float64
	Source string // e.g. "available memory (MemAvailable in /proc/meminfo)"
}

// Sources are where Find reads the limits; System is the machine's.
type Sources struct {
	ReadFile     func(path string) ([]byte, error) // reads /proc and /sys files
	AddressSpace func() (uint64, error)            // RLIMIT_AS; 2^62 or more is no limit
	Meminfo      string                            // /proc/meminfo
	Status       string                            // /proc/self/status, for the address space in use
	Cgroups      []string                          // the cgroup's limit files, v2 then v1
}

// System is the sources of this process on Linux.
func System() Sources {
	return Sources{
		ReadFile:     os.ReadFile,
		AddressSpace: addressSpace,
		Meminfo:      "/proc/meminfo",
		Status:       "/proc/self/status",
		Cgroups:      []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"},
	}
}

// Find returns the smallest of the limits it finds: the memory available now
// (MemAvailable: free memory and the caches the kernel can drop, what other processes
// leave), the address-space limit (RLIMIT_AS, ulimit -v) less the address space that this
// process has reserved but not touched (VmSize - VmRSS: the Go runtime reserves more than
// it uses), and the cgroup's memory limit (cgroup v2 memory.max, else v1
// memory.limit_in_bytes). A source that is absent (another system, no cgroup limit) is
// skipped; when none is found the limit is +Inf, "no limit found".
func (s Sources) Find() (Limit, error) {
	lim := Limit{Bytes: math.Inf(1), Source: "no limit found"}
	take := func(b float64, source string) {
		if b < lim.Bytes {
			lim = Limit{Bytes: b, Source: source}
		}
	}
	if kb, ok, err := s.field(s.Meminfo, "MemAvailable:"); err != nil {
		return Limit{}, err
	} else if ok {
		take(kb*1024, "the memory available (MemAvailable in "+s.Meminfo+")")
	}
	if s.AddressSpace != nil {
		as, err := s.AddressSpace()
		if err != nil {
			return Limit{}, fmt.Errorf("address-space limit: %w", err)
		}
		if as < 1<<62 { // RLIM_INFINITY is all ones on Linux, 2^63 - 1 on the BSDs
			reserved, err := s.reserved()
			if err != nil {
				return Limit{}, err
			}
			take(float64(as)-reserved, fmt.Sprintf("the address-space limit (RLIMIT_AS, ulimit -v, %s, less %s this process reserved and has not used)",
				model.Bytes(float64(as)), model.Bytes(reserved)))
		}
	}
	for _, path := range s.Cgroups {
		b, ok, err := s.cgroup(path)
		if err != nil {
			return Limit{}, err
		}
		if ok {
			take(b, "the cgroup memory limit ("+path+")")
			break
		}
	}
	return lim, nil
}

// field reads the value in kB of the line that starts with key in the file at path (of the
// /proc/meminfo format); ok is false when the file or the line is absent.
func (s Sources) field(path, key string) (kb float64, ok bool, err error) {
	if path == "" {
		return 0, false, nil
	}
	b, err := s.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, found := strings.CutPrefix(sc.Text(), key)
		if !found {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0, false, fmt.Errorf("%s: %s has no value", path, key)
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return 0, false, fmt.Errorf("%s: %s %w", path, key, err)
		}
		return v, true, nil
	}
	return 0, false, nil
}

// reserved is the address space this process has reserved but not touched, VmSize less
// VmRSS in bytes (0 when the status file is absent).
func (s Sources) reserved() (float64, error) {
	size, ok1, err := s.field(s.Status, "VmSize:")
	if err != nil {
		return 0, err
	}
	rss, ok2, err := s.field(s.Status, "VmRSS:")
	if err != nil || !ok1 || !ok2 {
		return 0, err
	}
	return max(0, size-rss) * 1024, nil
}

// cgroup reads a cgroup limit file: a number of bytes, or "max" (v2) or a number near
// 2^63 (v1) for none; ok is false when there is no limit.
func (s Sources) cgroup(path string) (float64, bool, error) {
	b, err := s.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	text := strings.TrimSpace(string(b))
	if text == "max" {
		return 0, false, nil
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%s: %q is not a number of bytes", path, text)
	}
	if v >= 1<<62 { // v1's "no limit" is the largest page-aligned int64
		return 0, false, nil
	}
	return v, true, nil
}

// Fits returns nil when the estimate need is within lim, else an error that gives the
// estimate, its parts and the limit, and says what to reduce; what names the work, such
// as "training" or "evaluation".
func Fits(what string, need model.Memory, lim Limit) error {
	if need.Total() <= lim.Bytes {
		return nil
	}
	return fmt.Errorf("%s needs an estimated %s, more than %s, %s: reduce the batch (-batch; -samples of sample), the context, the width or the layers (docs/runs.md, \"Memory\")",
		what, need, model.Bytes(lim.Bytes), lim.Source)
}
