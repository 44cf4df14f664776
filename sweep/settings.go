package sweep

import (
	"fmt"
	"strings"

	"lipformer/model"
	"lipformer/train"
)

// CheckSummary returns an error when the summary of the run directory d records other
// settings than the run s.
func CheckSummary(d *train.RunDir, s Spec) error {
	sum := d.Summary()
	if sum == nil {
		return nil
	}
	return sameSettings(s, sum.Model, sum.Options, d.Path(train.SummaryFile))
}

// sameSettings returns an error naming every setting in which a stored run (cfg, opt,
// read from source) differs from the run s (train.SettingsDiff). Unlike cmd/train -resume,
// a sweep changes no setting of a run it continues, the number of steps included: the
// same command continues the same grid.
func sameSettings(s Spec, cfg model.Config, opt train.Options, source string) error {
	diffs, err := train.SettingsDiff(s.Cfg, s.Opt, cfg, opt)
	if err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	if len(diffs) == 0 {
		return nil
	}
	return fmt.Errorf("%s records other settings than this sweep's (%s): continue with the same flags, or choose another -out",
		source, strings.Join(diffs, "; "))
}
