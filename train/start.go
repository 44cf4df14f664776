package train

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"lipformer/internal/atomicfile"
)

// checkStart refuses a new run in a directory that holds one (unless r.Restart, when it
// removes the metrics log of the run that crashed there), a resume of a run that has
// already reached its last step and ended (a run stopped during its final evaluation is
// resumed to compute it: finalPending), and a resume on a corpus of another vocabulary than the
// checkpoint's, or of another size or SHA-256 than it stores (a checkpoint that stores
// none is warned of).
func (r *Run) checkStart() error {
	if r.Resume == nil {
		path := filepath.Join(r.Out, MetricsFile)
		_, err := os.Stat(path)
		switch {
		case err == nil && r.Restart:
			if err := os.Remove(path); err != nil {
				return err
			}
			r.Log.Info("removed the metrics log of a run that stopped before its first checkpoint", "file", path)
		case err == nil:
			return errHoldsRun(r.Out)
		}
		return nil
	}
	if v := r.Corpus.Vocab.Bytes(); string(v) != string(r.Resume.Vocab) {
		return fmt.Errorf("resume %s: corpus %s has another vocabulary than the checkpoint (%d and %d bytes)", r.Out, r.Corpus.Name, len(v), len(r.Resume.Vocab))
	}
	step, err := r.Resume.MetaInt(MetaStep)
	if err != nil {
		return fmt.Errorf("resume %s: %w", r.Out, err)
	}
	id, ok, err := StoredCorpus(r.Resume.Meta)
	switch {
	case err != nil:
		return fmt.Errorf("resume %s: %w", r.Out, err)
	case !ok:
		r.Log.Warn("the checkpoint stores no size or hash of its corpus (it was written before they were stored): the corpus cannot be checked; the next checkpoint stores those of this one",
			"dir", r.Out, "corpus", r.Corpus.Path, "bytes", r.Corpus.Size, "sha256", r.Corpus.SHA256)
	case !id.Same(r.Corpus):
		return fmt.Errorf("resume %s at step %d: %s: an exact continuation needs the same text (give its file with -data)", r.Out, step, id.Differs(r.Corpus))
	}
	pending, err := finalPending(r.Out)
	if err != nil {
		return err
	}
	if step > r.Opt.Steps || step == r.Opt.Steps && !pending {
		return fmt.Errorf("resume %s: the run is at step %d and is to run %d steps in all, which leaves none to train: give more than %d",
			r.Out, step, r.Opt.Steps, step)
	}
	return nil
}

// finalPending reports whether the run in dir, whose checkpoint is at its last step, has
// not ended: it was interrupted (or crashed) during its final evaluation, which a resume
// then computes (RunDir.Action says resume, not skip).
func finalPending(dir string) (bool, error) {
	d, err := OpenRun(dir)
	if err != nil {
		return false, err
	}
	act, err := d.Action()
	return act == ActResume, err
}

// runFiles are the files of a run directory written atomically (atomicfile), whose
// temporaries an interrupted write leaves behind.
func runFiles() []string { return []string{LatestFile, BestFile, SummaryFile, MetricsFile} }

// removeTemporaries removes the temporary files of the run directory's own files, which
// only an interrupted write can have left when this process holds the directory's lock,
// and logs what it removed.
func removeTemporaries(dir string, log *slog.Logger) error {
	var names []string
	var size int64
	for _, f := range runFiles() {
		tmps, err := atomicfile.Temporaries(filepath.Join(dir, f))
		if err != nil {
			return err
		}
		for _, tmp := range tmps {
			if fi, err := os.Stat(tmp); err == nil {
				size += fi.Size()
			}
			if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("removing a stale temporary file: %w", err)
			}
			names = append(names, filepath.Base(tmp))
		}
	}
	if len(names) > 0 {
		log.Warn("removed stale temporary files of interrupted writes", "dir", dir, "files", strings.Join(names, " "), "bytes", size)
	}
	return nil
}
