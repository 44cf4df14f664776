package spec

import (
	"encoding/json"
	"strings"
	"testing"

	"lipformer/ops"
)

// TestEnumsRoundTrip: every value of every enum is written as its name and read back as
// itself, inside a Model as a checkpoint stores it.
func TestEnumsRoundTrip(t *testing.T) {
	for _, a := range Archs {
		for _, n := range Norms {
			for _, d := range []Dtype{Float32, Float64} {
				for _, b := range ops.BoundForms {
					m := Default()
					m.Arch, m.Norm, m.Dtype, m.L2Bound = a, n, d, b
					js, err := json.Marshal(m)
					if err != nil {
						t.Fatal(err)
					}
					for _, name := range []string{a.String(), n.String(), d.String()} {
						if !strings.Contains(string(js), `"`+name+`"`) {
							t.Errorf("%s: no %q", js, name)
						}
					}
					var back Model
					if err := json.Unmarshal(js, &back); err != nil {
						t.Fatalf("%s: %v", js, err)
					}
					if back != m {
						t.Errorf("%s read back as %+v", js, back)
					}
				}
			}
		}
	}
}

// TestEnumsRefuseUnknownNames: a name that is no value is refused naming it and the
// values, when parsed and when read from JSON.
func TestEnumsRefuseUnknownNames(t *testing.T) {
	for _, c := range []struct{ js, want string }{
		{`{"arch":"gpt"}`, `arch "gpt", want one of dp, l2, l2-untied, contractive-l2, invertible-l2, invertible-dp`},
		{`{"norm":"middle"}`, `norm placement "middle"`},
		{`{"dtype":"float16"}`, `dtype "float16"`},
		{`{"l2_bound":"tight"}`, `l2 bound "tight"`},
	} {
		var m Model
		err := json.Unmarshal([]byte(c.js), &m)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.js, err, c.want)
		}
	}
	if _, err := ParseNorm("middle"); err == nil {
		t.Error("norm placement middle accepted")
	}
	if _, err := ParseArch(""); err == nil {
		t.Error("empty architecture accepted")
	}
}

// TestUnsetEnumsFailValidate: a Model whose architecture or norm placement was never set
// (the zero value) is refused by Validate, naming the field.
func TestUnsetEnumsFailValidate(t *testing.T) {
	m := Default()
	m.Vocab = 10
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	m.Arch, m.Norm = 0, 0
	err := m.Validate()
	if err == nil || !strings.Contains(err.Error(), "arch unset") || !strings.Contains(err.Error(), "norm unset") {
		t.Errorf("unset arch and norm: %v", err)
	}
	if _, err := json.Marshal(m); err == nil {
		t.Error("an unset architecture was written")
	}
}

// TestMissingBoundMeansKim: a stored config without l2_bound (checkpoints of kim, and
// those written before the key existed) reads as the kim bound.
func TestMissingBoundMeansKim(t *testing.T) {
	var m Model
	if err := json.Unmarshal([]byte(`{"arch":"contractive-l2","norm":"pre","dtype":"float32"}`), &m); err != nil {
		t.Fatal(err)
	}
	if m.L2Bound != ops.BoundKim {
		t.Errorf("l2_bound %v, want kim", m.L2Bound)
	}
}
