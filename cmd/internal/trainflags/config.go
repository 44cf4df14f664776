package trainflags

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// AddConfig registers -config FILE on fs: a named experiment configuration (configs/*.toml)
// whose keys are the names of fs's flags. ApplyConfig reads it; the flag itself only
// records the path.
func AddConfig(fs *flag.FlagSet) {
	fs.String("config", "", "TOML file of settings named as these flags (configs/*.toml); flags on the command line override it")
}

// ApplyConfig finds -config FILE in args and sets every flag the file names, before fs
// parses args, so that the command line overrides the file whatever the order. A setting
// the program has no flag for, a value that is not a string, number or boolean, or a
// file that names -config, -resume or the same flag twice is an error naming the file
// and the key. Flags the file sets count as given (Given).
func ApplyConfig(fs *flag.FlagSet, args []string) error {
	return ApplyConfigAs(fs, args, nil)
}

// ApplyConfigAs is ApplyConfig for a program whose flags name some settings otherwise:
// the file's key k sets the flag rename[k] (sweep's -archs for a config's arch, a grid of
// one value unless -archs is on the command line).
func ApplyConfigAs(fs *flag.FlagSet, args []string, rename map[string]string) error {
	path, err := configPath(fs, args)
	if err != nil || path == "" {
		return err
	}
	var settings map[string]any
	if _, err := toml.DecodeFile(path, &settings); err != nil {
		return fmt.Errorf("-config %s: %w", path, err)
	}
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if k == "config" || k == "resume" {
			return fmt.Errorf("-config %s: key %q cannot be set in a config file", path, k)
		}
		name := k
		if r, ok := rename[k]; ok {
			name = r
		}
		if fs.Lookup(name) == nil {
			return fmt.Errorf("-config %s: unknown setting %q (the keys are %s's flag names, see -h)", path, k, fs.Name())
		}
		v, err := flagValue(settings[k])
		if err != nil {
			return fmt.Errorf("-config %s: %s: %w", path, k, err)
		}
		if err := fs.Set(name, v); err != nil {
			return fmt.Errorf("-config %s: %s = %s: %w", path, k, v, err)
		}
	}
	return nil
}

// configPath is the value of the last -config (or --config) in args before the first
// positional argument or "--", or "" when there is none. It steps over the values of fs's
// other flags as fs.Parse would.
func configPath(fs *flag.FlagSet, args []string) (string, error) {
	var path string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name != "config" {
			if f := fs.Lookup(name); f != nil && !hasValue && !isBool(f) {
				i++ // the flag's value
			}
			continue
		}
		if !hasValue {
			if i+1 == len(args) {
				return "", errors.New("flag needs an argument: -config")
			}
			i++
			value = args[i]
		}
		if value == "" {
			return "", errors.New("-config: empty file name")
		}
		path = value
	}
	return path, nil
}

// isBool reports whether f is a boolean flag, which takes no separate value.
func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// flagValue is a TOML value as a flag's text.
func flagValue(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	}
	return "", fmt.Errorf("value %v of type %T, want a string, number or boolean", v, v)
}
