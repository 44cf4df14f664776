package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"lipformer/model"
	"lipformer/safetensors"
)

// RunDir is a run directory, the directory Run.Train writes: the latest and the best
// checkpoint (LatestFile, BestFile), the metrics log (MetricsFile), the summary
// (SummaryFile) and the lock (LockFile). The run's model config, training options (its
// corpus spec among them) and steps completed are in the metadata of its checkpoints,
// and the config and options in its summary too.
type RunDir struct {
	dir        string
	summary    *Summary // nil when absent or unreadable
	summaryErr error    // why the summary file could not be read, or nil
	hasMetrics bool
	hasLatest  bool
}

// Action is what a program that brings runs to their end (cmd/sweep) does with a run
// directory, from its state (RunDir.Action).
type Action string

// The actions.
const (
	ActNew     Action = "train"   // nothing there yet
	ActResume  Action = "resume"  // interrupted or crashed after a checkpoint: continue from it
	ActRestart Action = "restart" // crashed before its first checkpoint: start over (Run.Restart)
	ActSkip    Action = "skip"    // finished (all its steps, or stopped at a non-finite value)
)

// OpenRun reads the state of the run directory dir: which of its files exist, and its
// summary. A directory that does not exist is an empty one, where a new run can start.
// A summary file that does not parse (empty, or cut short by a crash or a full disk) is
// set aside, not an error: the directory then has no summary, SummaryError says why, and
// a resume works from the checkpoint and the metrics log alone, as it always does, and
// writes a new summary.
func OpenRun(dir string) (*RunDir, error) {
	d := &RunDir{dir: dir}
	var err error
	if d.hasMetrics, err = fileExists(d.Path(MetricsFile)); err != nil {
		return nil, err
	}
	if d.hasLatest, err = fileExists(d.Path(LatestFile)); err != nil {
		return nil, err
	}
	path := d.Path(SummaryFile)
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return d, nil
	case err != nil:
		return nil, err
	}
	d.summary = new(Summary)
	if err := json.Unmarshal(b, d.summary); err != nil {
		d.summary, d.summaryErr = nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// SummaryError is why the directory's summary file could not be read (it exists but
// does not parse), or nil. A program that resumes the run warns of it.
func (d *RunDir) SummaryError() error { return d.summaryErr }

// fileExists reports whether path exists; an error other than its absence is returned.
func fileExists(path string) (bool, error) {
	_, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// Dir is the directory.
func (d *RunDir) Dir() string { return d.dir }

// Path is the path of the run's file name (LatestFile, MetricsFile, ...).
func (d *RunDir) Path(name string) string { return filepath.Join(d.dir, name) }

// Summary is the run's summary, nil when the directory has none (a run that has not
// ended, or crashed) or an unreadable one (SummaryError).
func (d *RunDir) Summary() *Summary { return d.summary }

// HoldsRun reports whether a run was started in the directory: it has a metrics log.
func (d *RunDir) HoldsRun() bool { return d.hasMetrics }

// HasCheckpoint reports whether the directory has a latest checkpoint.
func (d *RunDir) HasCheckpoint() bool { return d.hasLatest }

// Action decides what to do with the run: skip it when its summary says it ended,
// resume it from its checkpoint when it has one, restart it when it crashed before its
// first checkpoint, train it when nothing is there. A summary of an interrupted run
// without its checkpoint is an error. An unreadable summary (SummaryError) counts as
// one of an interrupted run.
func (d *RunDir) Action() (Action, error) {
	switch {
	case d.summary != nil && !d.summary.Interrupted:
		return ActSkip, nil
	case d.hasLatest && (d.summary != nil || d.summaryErr != nil || d.hasMetrics):
		return ActResume, nil
	case d.summary != nil:
		return "", fmt.Errorf("%s: the run was interrupted but its checkpoint %s is missing", d.dir, LatestFile)
	case d.hasMetrics:
		return ActRestart, nil
	}
	return ActNew, nil
}

// CheckNew refuses to start a new run in the directory when another process holds its
// lock (an error wrapping ErrRunInUse) or it holds a run already. Run.Train checks the
// same under the lock; a program calls CheckNew to refuse before it loads a corpus.
func (d *RunDir) CheckNew() error {
	if err := CheckLock(d.dir); err != nil {
		return err
	}
	if d.hasMetrics {
		return errHoldsRun(d.dir)
	}
	return nil
}

// errHoldsRun is the error of a new run in the directory dir, which holds a run.
func errHoldsRun(dir string) error {
	return fmt.Errorf("%s already holds a run (%s): resume it or choose another output directory", dir, MetricsFile)
}

// Resume returns the run that continues the directory's latest checkpoint, with the
// run's saved model, optimizer state and options, and the steps the checkpoint
// completed. It refuses a directory whose lock another process holds (an error wrapping
// ErrRunInUse). Only the number of steps and the corpus's place may then change
// (FixedOnResume); Run.Train refuses a run that it leaves no step to train, and a corpus
// that is not the text the checkpoint stores the size and hash of.
func (d *RunDir) Resume() (*Run, int, error) {
	if err := CheckLock(d.dir); err != nil {
		return nil, 0, err
	}
	r := &Run{Out: d.dir}
	path := d.Path(LatestFile)
	var err error
	if r.Model, r.Resume, err = model.Load(path); err != nil {
		return nil, 0, err
	}
	if r.Opt, err = TrainOptions(r.Resume); err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	step, err := r.Resume.MetaInt(MetaStep)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	return r, step, nil
}

// TrainOptions reads a checkpoint's training options.
func TrainOptions(ck *model.Checkpoint) (Options, error) {
	var o Options
	if err := json.Unmarshal([]byte(ck.Meta[MetaTrain]), &o); err != nil {
		return o, fmt.Errorf("checkpoint has no training options (metadata %s): %w", MetaTrain, err)
	}
	return o, nil
}

// FixedOnResume reports whether the setting called name (a JSON field of model.Config or
// Options, or the cmd/train flag that sets one) keeps its saved value when a run is
// resumed: every setting does but the number of steps, which may grow, and where the
// corpus is (data, a file that moved, and data-dir), which may change when the text does
// not: Run.Train refuses a corpus of another size or SHA-256 than the checkpoint stores.
func FixedOnResume(name string) bool { return name != "steps" && name != "data" && name != "data-dir" }

// Settings returns the run's model config and training options, from its summary when
// it has one, else from the metadata of its latest checkpoint (read without its
// tensors); ok is false when the directory has neither.
func (d *RunDir) Settings() (cfg model.Config, opt Options, ok bool, err error) {
	if d.summary != nil {
		return d.summary.Model, d.summary.Options, true, nil
	}
	if !d.hasLatest {
		return cfg, opt, false, nil
	}
	path := d.Path(LatestFile)
	meta, err := safetensors.ReadMetadataFile(path)
	if err != nil {
		return cfg, opt, false, err
	}
	if err := json.Unmarshal([]byte(meta[model.MetaConfig]), &cfg); err != nil {
		return cfg, opt, false, fmt.Errorf("%s: metadata %s: %w", path, model.MetaConfig, err)
	}
	if err := json.Unmarshal([]byte(meta[MetaTrain]), &opt); err != nil {
		return cfg, opt, false, fmt.Errorf("%s: metadata %s: %w", path, MetaTrain, err)
	}
	return cfg, opt, true, nil
}

// Metrics reads the run's metrics log (ReadMetrics); an absent log is an error wrapping
// fs.ErrNotExist.
func (d *RunDir) Metrics() (Metrics, error) { return ReadMetrics(d.Path(MetricsFile)) }

// CheckpointFile returns the checkpoint that path names: the latest checkpoint of a run
// directory, or path itself when it is a file.
func CheckpointFile(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if st.IsDir() {
		return filepath.Join(path, LatestFile), nil
	}
	return path, nil
}

// SettingsDiff lists the settings in which a run (cfg, opt) differs from a stored one
// (storedCfg, storedOpt), as "name: value here, value stored" in the order of the JSON
// field names. Both configs are compared as model.New builds them (model.Config.Built), so
// an invertible run asked for with norm pre matches its stored none. A zero vocabulary in
// cfg is not compared: it is unknown before the corpus is loaded.
func SettingsDiff(cfg model.Config, opt Options, storedCfg model.Config, storedOpt Options) ([]string, error) {
	if cfg.Vocab == 0 {
		cfg.Vocab = storedCfg.Vocab
	}
	cfg, storedCfg = cfg.Built(), storedCfg.Built()
	var diffs []string
	for _, pair := range [][2]any{{cfg, storedCfg}, {opt, storedOpt}} {
		w, err := jsonFields(pair[0])
		if err != nil {
			return nil, err
		}
		g, err := jsonFields(pair[1])
		if err != nil {
			return nil, err
		}
		for _, k := range slices.Sorted(maps.Keys(w)) {
			if w[k] != g[k] {
				diffs = append(diffs, fmt.Sprintf("%s: %s here, %s stored", k, w[k], g[k]))
			}
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
