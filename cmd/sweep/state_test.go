package main

import (
	"strings"
	"testing"

	"lipformer/train"
)

func TestActionFromDirectoryState(t *testing.T) {
	finished, interrupted := &train.Summary{}, &train.Summary{Interrupted: true}
	for _, c := range []struct {
		st   dirState
		want action
	}{
		{dirState{}, actTrain},
		{dirState{sum: finished, metrics: true, ckpt: true}, actSkip},
		{dirState{sum: &train.Summary{NonFinite: true}, metrics: true}, actSkip},
		{dirState{sum: interrupted, metrics: true, ckpt: true}, actResume},
		{dirState{metrics: true, ckpt: true}, actResume},
		{dirState{metrics: true}, actRestart},
	} {
		if got, err := c.st.action(); got != c.want || err != nil {
			t.Errorf("%+v: %q, %v; want %q", c.st, got, err, c.want)
		}
	}
	if _, err := (dirState{dir: "d", sum: interrupted, metrics: true}).action(); err == nil || !strings.Contains(err.Error(), train.LatestFile) {
		t.Errorf("interrupted run without a checkpoint: error %v", err)
	}
}
