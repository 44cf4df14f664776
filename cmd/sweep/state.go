package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"lipformer/model"
	"lipformer/train"
)

// action is what the sweep does with a run directory.
type action string

// The actions, from the state of the directory.
const (
	actTrain   action = "train"   // nothing there yet
	actResume  action = "resume"  // interrupted or crashed after a checkpoint: continue from it
	actRestart action = "restart" // crashed before its first checkpoint: start over
	actSkip    action = "skip"    // finished (all its steps, or stopped at a non-finite loss)
)

// dirState is what a run directory holds.
type dirState struct {
	dir     string
	sum     *train.Summary // summary.json, nil when absent
	metrics bool           // metrics.jsonl exists
	ckpt    bool           // the latest checkpoint exists
}

// inspect reads the state of the run directory dir.
func inspect(dir string) (dirState, error) {
	st := dirState{dir: dir}
	var err error
	if st.metrics, err = exists(filepath.Join(dir, train.MetricsFile)); err != nil {
		return st, err
	}
	if st.ckpt, err = exists(filepath.Join(dir, train.LatestFile)); err != nil {
		return st, err
	}
	path := filepath.Join(dir, train.SummaryFile)
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return st, nil
	case err != nil:
		return st, err
	}
	st.sum = new(train.Summary)
	if err := json.Unmarshal(b, st.sum); err != nil {
		return st, fmt.Errorf("%s: %w", path, err)
	}
	return st, nil
}

// exists reports whether path exists.
func exists(path string) (bool, error) {
	_, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// action decides what to do with the directory.
func (st dirState) action() (action, error) {
	switch {
	case st.sum != nil && !st.sum.Interrupted:
		return actSkip, nil
	case st.ckpt && (st.sum != nil || st.metrics):
		return actResume, nil
	case st.sum != nil:
		return "", fmt.Errorf("%s: the run was interrupted but its checkpoint %s is missing", st.dir, train.LatestFile)
	case st.metrics:
		return actRestart, nil
	}
	return actTrain, nil
}

// checkSummary returns an error when the directory's summary records settings other
// than the run's.
func (st dirState) checkSummary(s spec) error {
	if st.sum == nil {
		return nil
	}
	return sameSettings(s, st.sum.Model, st.sum.Options, filepath.Join(st.dir, train.SummaryFile))
}

// sameSettings returns an error naming every setting in which a stored run (cfg, opt,
// read from source) differs from the run s. A zero vocabulary in s is not compared: it
// is unknown before the corpus is loaded.
func sameSettings(s spec, cfg model.Config, opt train.Options, source string) error {
	if s.cfg.Vocab == 0 {
		s.cfg.Vocab = cfg.Vocab
	}
	var diffs []string
	for _, pair := range [][2]any{{s.cfg, cfg}, {s.opt, opt}} {
		d, err := fieldDiffs(pair[0], pair[1])
		if err != nil {
			return fmt.Errorf("%s: %w", source, err)
		}
		diffs = append(diffs, d...)
	}
	if len(diffs) == 0 {
		return nil
	}
	return fmt.Errorf("%s records other settings than this sweep's (%s): continue with the same flags, or choose another -out",
		source, strings.Join(diffs, "; "))
}

// fieldDiffs lists the JSON fields in which want and got differ, as
// "name: want here, got stored", in the order of the names.
func fieldDiffs(want, got any) ([]string, error) {
	w, err := jsonFields(want)
	if err != nil {
		return nil, err
	}
	g, err := jsonFields(got)
	if err != nil {
		return nil, err
	}
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(w)) {
		if w[k] != g[k] {
			diffs = append(diffs, fmt.Sprintf("%s: %s here, %s stored", k, w[k], g[k]))
		}
	}
	return diffs, nil
}

// jsonFields maps the JSON fields of v to their encoded values.
func jsonFields(v any) (map[string]string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(raw))
	for k, r := range raw {
		out[k] = string(r)
	}
	return out, nil
}
