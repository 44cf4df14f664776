package trainflags

import (
	"testing"

	"lipformer/train"
)

// TestPowerIters: -power-iters sets Options.PowerIters, on the command line or in a
// config file, and defaults to DefaultOptions'.
func TestPowerIters(t *testing.T) {
	_, opt, _, err := parse(t)
	if err != nil || opt.PowerIters != train.DefaultOptions().PowerIters {
		t.Errorf("no flag: power iterations %d, error %v; want the default %d", opt.PowerIters, err, train.DefaultOptions().PowerIters)
	}
	if _, opt, _, err = parse(t, "-power-iters", "3"); err != nil || opt.PowerIters != 3 {
		t.Errorf("-power-iters 3: %d, error %v", opt.PowerIters, err)
	}
	if _, opt, _, err = parse(t, "-config", writeConfig(t, "power-iters = 5\n")); err != nil || opt.PowerIters != 5 {
		t.Errorf("power-iters = 5 in a config file: %d, error %v", opt.PowerIters, err)
	}
}
