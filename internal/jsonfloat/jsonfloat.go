// Package jsonfloat writes and reads float64 values in JSON, NaN and the infinities
// included.
package jsonfloat

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Float is a float64 in JSON. JSON has no numbers for NaN and the infinities,
// which are exactly what a failing run produces, so they are written as the
// strings "NaN", "+Inf" and "-Inf" (which Python's float() also parses);
// finite values are plain numbers.
type Float float64

// MarshalJSON writes f as a number, or as a string when it is not finite.
func (f Float) MarshalJSON() ([]byte, error) {
	x := float64(f)
	switch {
	case math.IsNaN(x):
		return []byte(`"NaN"`), nil
	case math.IsInf(x, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(x, -1):
		return []byte(`"-Inf"`), nil
	}
	return json.Marshal(x)
}

// UnmarshalJSON reads a number or one of the strings MarshalJSON writes.
func (f *Float) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		switch s {
		case "NaN":
			*f = Float(math.NaN())
		case "+Inf":
			*f = Float(math.Inf(1))
		case "-Inf":
			*f = Float(math.Inf(-1))
		default:
			return fmt.Errorf("%q is not a number, \"NaN\", \"+Inf\" or \"-Inf\"", s)
		}
		return nil
	}
	x, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("%s is not a number", b)
	}
	*f = Float(x)
	return nil
}
