package clitest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Shared is the meaning of a flag name every program that has it gives it: the kind
// flag.PrintDefaults shows ("" for a boolean) and a phrase its usage contains.
type Shared struct {
	Kind, Phrase string
}

// Scheme returns the flag names lipformer's programs share, each with one meaning (the
// README's Programs section): -out where the result is written, -steps optimizer steps,
// -batch sequences of the context length processed together, -config a TOML file of
// settings, -data a corpus, -data-dir where corpora are found, -json JSON on stdout,
// -ckpt a run directory or checkpoint, -seed the seed, -plot and -csv extra files.
func Scheme() map[string]Shared {
	return map[string]Shared{
		"out":      {"string", "output"},
		"steps":    {"int", "optimizer steps"},
		"batch":    {"int", "sequences of the context length"},
		"config":   {"string", "TOML file"},
		"data":     {"string", "corpus"},
		"data-dir": {"string", "where corpora are found"},
		"json":     {"", "JSON"},
		"ckpt":     {"string", "run directory"},
		"seed":     {"uint", "seed"},
		"plot":     {"string", ".png"},
		"csv":      {"string", "CSV"},
	}
}

// Required returns the shared flags a program must have: every program that writes a
// result into a file or directory it names takes -out, and the training programs -config.
func Required() map[string][]string {
	return map[string][]string{
		"bench": {"out", "json"},
		"plot":  {"out"},
		"sweep": {"out", "config", "steps", "batch", "data", "data-dir"},
		"train": {"out", "config", "steps", "batch", "data", "data-dir", "json"},
	}
}

// SchemeProblems returns how the usage text of program name (flag.PrintDefaults's
// output) departs from Scheme and Required: a shared flag of another kind or without its
// phrase, or a required flag missing. A flag whose usage begins "deprecated name of -"
// is an alias and is not checked.
func SchemeProblems(name, usage string) []string {
	flags := usageFlags(usage)
	var problems []string
	for _, f := range slices.Sorted(maps.Keys(flags)) {
		u := flags[f]
		want, shared := Scheme()[f]
		if !shared || strings.HasPrefix(u.usage, "deprecated name of -") {
			continue
		}
		if u.kind != want.Kind || !strings.Contains(u.usage, want.Phrase) {
			problems = append(problems, fmt.Sprintf("%s -%s %s %q: the shared -%s is %q with %q in its usage", name, f, u.kind, u.usage, f, want.Kind, want.Phrase))
		}
	}
	for _, f := range Required()[name] {
		if _, ok := flags[f]; !ok {
			problems = append(problems, fmt.Sprintf("%s has no -%s", name, f))
		}
	}
	return problems
}

// usageFlag is one flag of a usage text: its kind and its usage, lines joined.
type usageFlag struct {
	kind, usage string
}

// usageFlags parses flag.PrintDefaults's output: "  -name kind" lines, each followed by
// its usage on lines that begin with a tab (on the same line after a tab for a one-letter
// name).
func usageFlags(usage string) map[string]usageFlag {
	flags := map[string]usageFlag{}
	var name string
	for _, line := range strings.Split(usage, "\n") {
		switch {
		case strings.HasPrefix(line, "  -"):
			head, rest, _ := strings.Cut(line, "\t") // a one-letter flag's usage follows a tab
			fields := strings.Fields(head)
			name = strings.TrimPrefix(fields[0], "-")
			f := usageFlag{usage: strings.TrimSpace(rest)}
			if len(fields) > 1 {
				f.kind = fields[1]
			}
			flags[name] = f
		case name != "" && strings.HasPrefix(strings.TrimLeft(line, " "), "\t"):
			f := flags[name]
			f.usage = strings.TrimSpace(f.usage + " " + strings.TrimSpace(line))
			flags[name] = f
		}
	}
	return flags
}
