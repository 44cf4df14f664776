package main

import (
	"fmt"
	"path/filepath"
	"strings"
)

// legends returns the legend label of each run: its name (the directory's base name, or
// the whole path when two runs share a base name), followed by the settings in which the
// runs with known settings differ (the architecture bare, the others as flag=value). A run
// that reached a non-finite value is marked "diverged", with the first such step when the
// log has it.
func legends(runs []*runInfo) []string {
	differ := differingKeys(runs)
	names := make([]string, len(runs))
	count := map[string]int{}
	for i, r := range runs {
		names[i] = filepath.Base(filepath.Clean(r.dir))
		count[names[i]]++
	}
	labels := make([]string, len(runs))
	for i, r := range runs {
		labels[i] = names[i]
		if count[names[i]] > 1 {
			labels[i] = filepath.Clean(r.dir)
		}
		if s := settingsLabel(r, differ); s != "" {
			labels[i] += ": " + s
		}
		if step := r.metrics.FirstNonFinite(); step >= 0 {
			labels[i] += fmt.Sprintf(" (diverged at step %d)", step)
		} else if r.nonFinite {
			labels[i] += " (diverged)"
		}
	}
	return labels
}

// differingKeys returns the set of settings whose values are not the same across the
// runs whose settings are known.
func differingKeys(runs []*runInfo) map[string]bool {
	first := map[string]string{}
	differ := map[string]bool{}
	for _, r := range runs {
		for _, s := range r.settings() {
			v, seen := first[s.key]
			switch {
			case !seen:
				first[s.key] = s.value
			case v != s.value:
				differ[s.key] = true
			}
		}
	}
	return differ
}

// settingsLabel joins the run's settings that are in differ, in settings order; it is
// empty when the run's settings are unknown or none differ.
func settingsLabel(r *runInfo, differ map[string]bool) string {
	var parts []string
	for _, s := range r.settings() {
		switch {
		case !differ[s.key]:
		case s.key == "arch":
			parts = append(parts, s.value)
		default:
			parts = append(parts, s.key+"="+s.value)
		}
	}
	return strings.Join(parts, " ")
}
