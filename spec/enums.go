package spec

import (
	"errors"
	"fmt"
	"strings"

	"gorgonia.org/tensor"

	"lipformer/ops"
)

// Arch is a model architecture (docs/math.md, "The language model"). The invertible ones
// are built of invertible residual blocks (docs/math.md, "Contraction and inversion");
// invertible-dp is the negative control. The zero Arch is unset, which Validate refuses.
type Arch uint8

// The architectures.
const (
	DP            Arch = iota + 1 // dot-product attention, pre-LN GPT-2 blocks
	L2                            // tied L2 attention (Lipschitz)
	L2Untied                      // L2 logits with separate keys (not Lipschitz)
	ContractiveL2                 // tied L2 attention divided by its certified bound
	InvertibleL2                  // invertible residual blocks of contractive L2 attention and MLPs
	InvertibleDP                  // the negative control: dp attention with naively normalised maps
)

// Archs lists every architecture in the order flags and tables name them.
var Archs = []Arch{DP, L2, L2Untied, ContractiveL2, InvertibleL2, InvertibleDP}

var archNames = map[Arch]string{DP: "dp", L2: "l2", L2Untied: "l2-untied", ContractiveL2: "contractive-l2",
	InvertibleL2: "invertible-l2", InvertibleDP: "invertible-dp"}

// String is the architecture's name: dp, l2, l2-untied, contractive-l2, invertible-l2 or
// invertible-dp ("" when unset).
func (a Arch) String() string { return archNames[a] }

// Kind is the attention logits of the architecture.
func (a Arch) Kind() ops.AttentionKind {
	switch a {
	case L2, ContractiveL2, InvertibleL2:
		return ops.L2
	case L2Untied:
		return ops.L2Untied
	}
	return ops.DotProduct
}

// Invertible reports whether the architecture is built of invertible blocks.
func (a Arch) Invertible() bool { return a == InvertibleL2 || a == InvertibleDP }

// Contractive reports whether the architecture scales its branches to a coefficient c:
// contractive-l2 and the invertible ones.
func (a Arch) Contractive() bool { return a == ContractiveL2 || a.Invertible() }

// TiedL2 reports whether the architecture's attention is tied L2.
func (a Arch) TiedL2() bool { return a.Kind() == ops.L2 }

// MarshalText writes the name.
func (a Arch) MarshalText() ([]byte, error) { return marshalName(a, "arch") }

// UnmarshalText parses a name of Archs.
func (a *Arch) UnmarshalText(b []byte) error {
	return unmarshalName(a, Archs, b, fmt.Sprintf("arch %q, want one of %s", b, joinNames(Archs)))
}

// ParseArch parses a name of Archs.
func ParseArch(s string) (Arch, error) {
	var a Arch
	return a, a.UnmarshalText([]byte(s))
}

// Norm is where a block places its normalisations. The zero Norm is unset, which Validate
// refuses.
type Norm uint8

// The norm placements.
const (
	// PreLN: x = x + Attn(LN(x)); x = x + MLP(LN(x)).
	PreLN Norm = iota + 1
	// PostLN: x = LN(x + Attn(x)); x = LN(x + MLP(x)).
	PostLN
	// NoLN: x = x + Attn(x); x = x + MLP(x).
	NoLN
	// BallPre: x = x + Attn(B(x)); x = x + MLP(B(x)), B a ball norm, LayerNorm's certified
	// substitute.
	BallPre
)

// Norms lists every norm placement.
var Norms = []Norm{PreLN, PostLN, NoLN, BallPre}

var normNames = map[Norm]string{PreLN: "pre", PostLN: "post", NoLN: "none", BallPre: "ball"}

// String is "pre", "post", "none" or "ball" ("" when unset).
func (n Norm) String() string { return normNames[n] }

// MarshalText writes the name.
func (n Norm) MarshalText() ([]byte, error) { return marshalName(n, "norm placement") }

// UnmarshalText parses a name of Norms.
func (n *Norm) UnmarshalText(b []byte) error {
	return unmarshalName(n, Norms, b, fmt.Sprintf("norm placement %q, want pre, post, none or ball", b))
}

// ParseNorm parses a name of Norms.
func ParseNorm(s string) (Norm, error) {
	var n Norm
	return n, n.UnmarshalText([]byte(s))
}

// Dtype is the element type of a model's parameters. The zero Dtype is float32.
type Dtype uint8

// The element types.
const (
	Float32 Dtype = iota
	Float64
)

// String is "float32" or "float64".
func (d Dtype) String() string {
	if d == Float64 {
		return "float64"
	}
	return "float32"
}

// Tensor is the tensor element type.
func (d Dtype) Tensor() tensor.Dtype {
	if d == Float64 {
		return tensor.Float64
	}
	return tensor.Float32
}

// MarshalText writes the name.
func (d Dtype) MarshalText() ([]byte, error) {
	if d > Float64 {
		return nil, fmt.Errorf("dtype %d is not float32 or float64", uint8(d))
	}
	return []byte(d.String()), nil
}

// UnmarshalText parses "float32" or "float64".
func (d *Dtype) UnmarshalText(b []byte) error {
	switch string(b) {
	case "float32":
		*d = Float32
	case "float64":
		*d = Float64
	default:
		return fmt.Errorf("dtype %q, want float32 or float64", b)
	}
	return nil
}

// ParseDtype parses "float32" or "float64".
func ParseDtype(s string) (Dtype, error) {
	var d Dtype
	return d, d.UnmarshalText([]byte(s))
}

// marshalName writes the name of x, an enum value named by its String, or an error for a
// value without a name.
func marshalName[X interface {
	fmt.Stringer
	~uint8
}](x X, what string) ([]byte, error) {
	if x.String() == "" {
		return nil, fmt.Errorf("%s %d has no name", what, uint8(x))
	}
	return []byte(x.String()), nil
}

// unmarshalName sets *x to the value of xs named b, or returns an error saying refused.
func unmarshalName[X fmt.Stringer](x *X, xs []X, b []byte, refused string) error {
	for _, v := range xs {
		if v.String() == string(b) {
			*x = v
			return nil
		}
	}
	return errors.New(refused)
}

// joinNames joins the names of xs with commas.
func joinNames[X fmt.Stringer](xs []X) string {
	names := make([]string, len(xs))
	for i, x := range xs {
		names[i] = x.String()
	}
	return strings.Join(names, ", ")
}

// ArchNames lists the architectures' names, separated by commas.
func ArchNames() string { return joinNames(Archs) }
