package train

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepairMetrics: RepairMetrics removes what follows the last newline of a log, the
// torn row ReadMetrics reports as ErrTornRow, and leaves a log ending in a newline alone.
func TestRepairMetrics(t *testing.T) {
	good := `{"kind":"eval","step":1,"val_loss":1,"val_bpc":1.4,"elapsed_s":1}` + "\n"
	long := strings.Repeat(good, 3000) // longer than the chunk RepairMetrics reads backwards
	for _, c := range []struct {
		name, text, want string
	}{
		{"torn", good + good + `{"kind":"ev`, good + good},
		{"whole", good + good, good + good},
		{"empty", "", ""},
		{"only torn", `{"kind":"ev`, ""},
		{"long torn row", long + strings.Repeat("x", 70_000), long},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), MetricsFile)
			if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := ReadMetrics(path); (len(c.text) != len(c.want)) != errors.Is(err, ErrTornRow) {
				t.Errorf("ReadMetrics before repair: %v", err)
			}
			n, err := RepairMetrics(path)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != c.want || n != int64(len(c.text)-len(c.want)) {
				t.Errorf("removed %d bytes, left %d; want %d removed, %d left", n, len(b), len(c.text)-len(c.want), len(c.want))
			}
			if _, err := ReadMetrics(path); err != nil {
				t.Errorf("ReadMetrics after repair: %v", err)
			}
		})
	}
	if _, err := RepairMetrics(filepath.Join(t.TempDir(), MetricsFile)); err == nil || !strings.Contains(err.Error(), MetricsFile) {
		t.Errorf("RepairMetrics of a missing file: %v, want an error naming it", err)
	}
}
