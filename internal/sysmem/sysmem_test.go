package sysmem

import (
	"io/fs"
	"math"
	"strings"
	"testing"

	"lipformer/model"
)

// fake is a machine of the given files and address-space limit.
func fake(files map[string]string, as uint64) Sources {
	return Sources{
		ReadFile: func(path string) ([]byte, error) {
			s, ok := files[path]
			if !ok {
				return nil, fs.ErrNotExist
			}
			return []byte(s), nil
		},
		AddressSpace: func() (uint64, error) { return as, nil },
		Meminfo:      "meminfo", Status: "status", Cgroups: []string{"v2", "v1"},
	}
}

const meminfo = "MemTotal:       24683584 kB\nMemFree:         1000000 kB\nMemAvailable:   23299028 kB\n"

// TestFindTakesTheSmallest: the smallest of the available memory, the address-space
// limit less the reserved address space, and the cgroup limit, with its source named.
func TestFindTakesTheSmallest(t *testing.T) {
	status := "VmSize:\t  900000 kB\nVmRSS:\t  100000 kB\n"
	for _, c := range []struct {
		name   string
		files  map[string]string
		as     uint64
		bytes  float64
		source string
	}{
		{"meminfo", map[string]string{"meminfo": meminfo, "v2": "max\n"}, math.MaxUint64, 23299028 * 1024, "MemAvailable"},
		{"rlimit", map[string]string{"meminfo": meminfo, "status": status}, 3000000 * 1024, (3000000 - 800000) * 1024, "RLIMIT_AS"},
		{"cgroup v2", map[string]string{"meminfo": meminfo, "v2": "2147483648\n"}, math.MaxUint64, 2147483648, "v2"},
		{"cgroup v1", map[string]string{"meminfo": meminfo, "v1": "1073741824\n"}, math.MaxUint64, 1073741824, "v1"},
		{"cgroup v1 unlimited", map[string]string{"meminfo": meminfo, "v1": "9223372036854771712\n"}, math.MaxUint64, 23299028 * 1024, "MemAvailable"},
		{"nothing", map[string]string{}, math.MaxUint64, math.Inf(1), "no limit"},
	} {
		lim, err := fake(c.files, c.as).Find()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if lim.Bytes != c.bytes || !strings.Contains(lim.Source, c.source) {
			t.Errorf("%s: %.0f bytes from %q, want %.0f from %s", c.name, lim.Bytes, lim.Source, c.bytes, c.source)
		}
	}
	if _, err := fake(map[string]string{"v2": "lots\n"}, math.MaxUint64).Find(); err == nil || !strings.Contains(err.Error(), "v2") {
		t.Errorf("a cgroup file that is not a number: error %v, want one naming the file", err)
	}
}

// TestFitsNamesTheEstimateAndTheLimit: a configuration above the limit is refused with the
// estimate, its parts and the limit's size and source; one within it is not.
func TestFitsNamesTheEstimateAndTheLimit(t *testing.T) {
	cfg := model.Default()
	cfg.Layers, cfg.Width, cfg.Heads = 1, 32, 4
	need, err := model.EstimateMemory(cfg, 100000, model.Train, model.Eval)
	if err != nil {
		t.Fatal(err)
	}
	lim := Limit{Bytes: 3e9, Source: "the address-space limit (RLIMIT_AS)"}
	err = Fits("training", need, lim)
	for _, want := range []string{"training needs an estimated " + model.Bytes(need.Total()), "activations and gradients", "attention",
		"more than 3.0 GB, the address-space limit (RLIMIT_AS)", "reduce the batch"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one containing %q", err, want)
		}
	}
	small, err := model.EstimateMemory(cfg, 12, model.Train, model.Eval)
	if err != nil {
		t.Fatal(err)
	}
	if err := Fits("training", small, lim); err != nil {
		t.Errorf("batch 12 (%s) within 3 GB: %v", small, err)
	}
}
