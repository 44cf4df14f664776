package jsonfloat

import (
	"encoding/json"
	"math"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	for _, c := range []struct {
		v    float64
		text string
	}{{1.5, "1.5"}, {-2, "-2"}, {math.NaN(), `"NaN"`}, {math.Inf(1), `"+Inf"`}, {math.Inf(-1), `"-Inf"`}} {
		b, err := json.Marshal(Float(c.v))
		if err != nil || string(b) != c.text {
			t.Fatalf("%v: marshalled %s, %v; want %s", c.v, b, err, c.text)
		}
		var back Float
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if got := float64(back); got != c.v && !(math.IsNaN(got) && math.IsNaN(c.v)) {
			t.Fatalf("%s read back as %v, want %v", b, got, c.v)
		}
	}
}

func TestRejectsOtherStrings(t *testing.T) {
	var f Float
	for _, text := range []string{`"inf"`, `"x"`, `true`} {
		if err := json.Unmarshal([]byte(text), &f); err == nil {
			t.Errorf("%s accepted", text)
		}
	}
}
