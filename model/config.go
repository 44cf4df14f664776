// Package model is lipformer's byte-level transformer language model: its configuration
// (saved in every checkpoint), its parameters, the graphs built from them for training,
// evaluation and sampling, and the incremental Decoder (a key/value cache) with which
// Generate samples: beyond the context, window Shift (the default) or Slide.
package model

import (
	"fmt"
	"math"
	"strings"

	"gorgonia.org/tensor"

	"lipformer/layers"
	"lipformer/ops"
)

// Architectures lists the values of Config.Arch (docs/math.md, "The language model"). The invertible ones are
// built of layers.InvertibleBlock (docs/math.md, "Contraction and inversion"); invertible-dp is the negative control.
var Architectures = []string{"dp", "l2", "l2-untied", "contractive-l2", "invertible-l2", "invertible-dp"}

// Config describes a model. It is saved inside every checkpoint, so evaluation, sampling
// and resuming need no flags to rebuild the model.
type Config struct {
	Arch    string  `json:"arch"`    // one of Architectures
	Layers  int     `json:"layers"`  // number of blocks
	Heads   int     `json:"heads"`   // attention heads per block
	Width   int     `json:"width"`   // D
	Hidden  int     `json:"hidden"`  // MLP width; 0 means 4D
	Context int     `json:"context"` // T, the longest sequence, and the number of learned positions
	Vocab   int     `json:"vocab"`   // V, distinct bytes of the corpus
	Dropout float64 `json:"dropout"` // on residual branches, training only
	Norm    string  `json:"norm"`    // LayerNorm placement: pre, post or none (always none for invertible archs)
	LipC    float64 `json:"lip_c"`   // Lipschitz coefficient c of contractive attention and invertible branches
	Dtype   string  `json:"dtype"`   // float32 or float64
	Std     float64 `json:"init_std"`
	// EmbedStd is the initial scale of the token and position embeddings, which sets the
	// scale of the residual stream that ball norms project; 0 means Std.
	EmbedStd float64 `json:"embed_std,omitempty"`
	Tie      bool    `json:"tie"` // the head is the token embedding transposed (GPT-2, nanoGPT)
	// BalanceL2 starts tied L2 value paths at dot-product scale (layers.Attention.BalanceL2Values).
	BalanceL2 bool `json:"balance_l2"`
	// L2Bound is the bound contractive tied L2 attention divides by: "kim" (Kim et al.'s
	// product of separate norms; "" in older checkpoints means kim), "product" (inf-norm
	// bound from the norms of the products the Jacobian contains) or "token2" (the
	// token-norm bound, spectral norms); docs/math.md.
	L2Bound string `json:"l2_bound,omitempty"`
	// L2Temp gives tied L2 attention a learned per-head temperature (layers.Attention.LogTemp).
	L2Temp bool `json:"l2_temp,omitempty"`
	// L2PosBias gives tied L2 attention a learned position bias of the logits
	// (layers.Attention.PosBias); contractive attention then needs the token2 bound.
	L2PosBias bool `json:"l2_pos_bias,omitempty"`
	// MLPGain > 0 gives the MLP branches of invertible architectures a learned scalar input
	// gain starting at MLPGain (layers.SpectralMLP.LogGain), which leaves their Lipschitz
	// constant unchanged; 0 for none.
	MLPGain float64 `json:"mlp_gain,omitempty"`
	// BallRadius is the initial radius of the BallNorms of Norm "ball", in units of
	// sqrt(D); 0 means the embeddings' initial scale (EmbedStd, or Std), so that the
	// stream's tokens, of norm about sqrt(2D) times it, start outside the ball.
	BallRadius float64 `json:"ball_radius,omitempty"`
}

// L2BoundForms lists the values of Config.L2Bound.
var L2BoundForms = []string{"kim", "product", "token2"}

// Default is a small pre-LN L2 model: 4 layers, 4 heads, width 128, context 64.
func Default() Config {
	return Config{Arch: "l2", Layers: 4, Heads: 4, Width: 128, Context: 64, Norm: "pre", LipC: 0.9, Dtype: "float32", Std: 0.02}
}

// Validate returns an error naming the first field that is out of range.
func (c Config) Validate() error {
	var errs []string
	bad := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	if _, err := c.attentionKind(); err != nil {
		bad("%v", err)
	}
	if c.Layers < 1 {
		bad("layers %d, want >= 1", c.Layers)
	}
	if c.Width < 1 || c.Heads < 1 || c.Width%c.Heads != 0 {
		bad("width %d with %d heads, want a positive width divisible by the heads", c.Width, c.Heads)
	}
	if c.Hidden < 0 {
		bad("hidden %d, want >= 0 (0 means 4 x width)", c.Hidden)
	}
	if c.Context < 1 {
		bad("context %d, want >= 1", c.Context)
	}
	if c.Vocab < 1 || c.Vocab > 256 {
		bad("vocab %d, want 1..256 (bytes)", c.Vocab)
	}
	if c.Dropout < 0 || c.Dropout >= 1 {
		bad("dropout %g, want 0 <= p < 1", c.Dropout)
	}
	if _, err := layers.ParseNorm(c.Norm); err != nil {
		bad("%v", err)
	}
	if c.Arch == "contractive-l2" && !(c.LipC > 0) {
		bad("lip_c %g, want > 0 for contractive attention", c.LipC)
	}
	if c.invertible() && !(c.LipC > 0 && c.LipC < 1) {
		bad("lip_c %g, want 0 < c < 1 for an invertible architecture", c.LipC)
	}
	if c.invertible() && c.Norm == string(layers.PostLN) {
		bad("norm post: an invertible architecture has no LayerNorm in its blocks (want none or ball; pre is taken as none)")
	}
	if form, _ := c.boundForm(); c.Arch == "invertible-l2" && c.Norm == string(layers.BallPre) && form != ops.BoundTok2 {
		bad("norm ball with l2_bound %q: the ball norm is 1-Lipschitz in the token norm, not the inf-norm; want l2_bound token2", c.EffectiveL2Bound())
	}
	if !(c.BallRadius >= 0) || math.IsInf(c.BallRadius, 0) {
		bad("ball_radius %g, want finite and >= 0 (0: the embeddings' init scale)", c.BallRadius)
	}
	if c.BallRadius > 0 && c.Norm != string(layers.BallPre) {
		bad("ball_radius with norm %q: only norm ball has ball norms", c.Norm)
	}
	if _, err := c.boundForm(); err != nil {
		bad("%v", err)
	}
	if kind, _ := c.attentionKind(); c.L2Temp && kind != ops.L2 {
		bad("l2_temp: arch %s has no tied L2 attention", c.Arch)
	}
	if kind, _ := c.attentionKind(); c.L2PosBias && kind != ops.L2 {
		bad("l2_pos_bias: arch %s has no tied L2 attention", c.Arch)
	}
	if form, _ := c.boundForm(); c.L2PosBias && c.contraction() > 0 && form != ops.BoundTok2 {
		bad("l2_pos_bias with l2_bound %q: a contractive layer with a position bias divides by the token2 bound", c.EffectiveL2Bound())
	}
	if !(c.MLPGain >= 0) || math.IsInf(c.MLPGain, 0) {
		bad("mlp_gain %g, want finite and >= 0 (0: none)", c.MLPGain)
	}
	if c.MLPGain > 0 && !c.invertible() {
		bad("mlp_gain: arch %s has no invertible MLP branches", c.Arch)
	}
	if _, err := c.dtype(); err != nil {
		bad("%v", err)
	}
	if !(c.Std > 0) {
		bad("init_std %g, want > 0", c.Std)
	}
	if !(c.EmbedStd >= 0) || math.IsInf(c.EmbedStd, 0) {
		bad("embed_std %g, want finite and >= 0 (0: init_std)", c.EmbedStd)
	}
	if len(errs) > 0 {
		return fmt.Errorf("model config: %s", strings.Join(errs, "; "))
	}
	return nil
}

// hidden is the MLP width.
func (c Config) hidden() int {
	if c.Hidden == 0 {
		return 4 * c.Width
	}
	return c.Hidden
}

// attentionKind maps the architecture to its attention logits.
func (c Config) attentionKind() (ops.AttentionKind, error) {
	switch c.Arch {
	case "dp":
		return ops.DotProduct, nil
	case "l2", "contractive-l2", "invertible-l2":
		return ops.L2, nil
	case "l2-untied":
		return ops.L2Untied, nil
	case "invertible-dp":
		return ops.DotProduct, nil
	}
	return 0, fmt.Errorf("arch %q, want one of %s", c.Arch, strings.Join(Architectures, ", "))
}

// WithCertifiedRecipe returns c with, for contractive-l2 and invertible-l2 whose L2Bound is
// unset, the certified recipe: the token2 bound, per-head temperatures and a position bias,
// and for invertible-l2 without an MLP gain an MLP gain starting at RecipeMLPGain
// (docs/math.md). New runs use it unless a bound is named; a checkpoint's config, where an
// unset L2Bound means kim, must not pass through it.
func (c Config) WithCertifiedRecipe() Config {
	if c.L2Bound == "" && (c.Arch == "contractive-l2" || c.Arch == "invertible-l2") {
		c.L2Bound, c.L2Temp, c.L2PosBias = "token2", true, true
		if c.Arch == "invertible-l2" && c.MLPGain == 0 {
			c.MLPGain = RecipeMLPGain
		}
	}
	return c
}

// RecipeMLPGain is the initial MLP gain of the certified invertible-l2 recipe. Started at
// 8 or more, trained gains reach e^6.6 to e^7.7; started at 1, e^1.3 to e^3.6 and a worse
// model (EXPERIMENTS.md, "The invertible block's MLP gain").
const RecipeMLPGain = 256

// boundForm maps L2Bound to the bound of contractive attention.
func (c Config) boundForm() (ops.BoundForm, error) {
	switch c.EffectiveL2Bound() {
	case "kim":
		return ops.BoundKim, nil
	case "product":
		return ops.BoundProduct, nil
	case "token2":
		return ops.BoundTok2, nil
	}
	return 0, fmt.Errorf("l2_bound %q, want one of %s", c.L2Bound, strings.Join(L2BoundForms, ", "))
}

// Uses reports whether the setting named by its JSON key shapes a model of c's
// architecture: balance_l2, l2_temp and l2_pos_bias only tied L2 attention, l2_bound only
// contractive tied L2 attention, lip_c only contractive and invertible architectures,
// mlp_gain only invertible ones, ball_radius only norm ball, every other key always.
func (c Config) Uses(key string) bool {
	contractive := c.Arch == "contractive-l2" || c.invertible()
	switch key {
	case "balance_l2", "l2_temp", "l2_pos_bias":
		kind, err := c.attentionKind()
		return err == nil && kind == ops.L2
	case "l2_bound":
		return c.Arch == "contractive-l2" || c.Arch == "invertible-l2"
	case "lip_c":
		return contractive
	case "mlp_gain":
		return c.invertible()
	case "ball_radius":
		return c.Norm == string(layers.BallPre)
	}
	return true
}

// EffectiveL2Bound is the bound contractive tied L2 attention divides by: L2Bound, or
// "kim" when it is unset.
func (c Config) EffectiveL2Bound() string {
	if c.L2Bound == "" {
		return "kim"
	}
	return c.L2Bound
}

// EffectiveEmbedStd is the embeddings' initial scale: EmbedStd, or Std when it is 0.
func (c Config) EffectiveEmbedStd() float64 {
	if c.EmbedStd == 0 {
		return c.Std
	}
	return c.EmbedStd
}

// EffectiveBallRadius is the ball norms' initial radius in units of sqrt(D): BallRadius, or
// EffectiveEmbedStd when it is 0.
func (c Config) EffectiveBallRadius() float64 {
	if c.BallRadius == 0 {
		return c.EffectiveEmbedStd()
	}
	return c.BallRadius
}

// invertible reports whether the architecture is built of invertible blocks.
func (c Config) invertible() bool { return strings.HasPrefix(c.Arch, "invertible-") }

// dtype maps the Dtype name to a tensor dtype.
func (c Config) dtype() (tensor.Dtype, error) {
	switch c.Dtype {
	case "float32":
		return tensor.Float32, nil
	case "float64":
		return tensor.Float64, nil
	}
	return tensor.Dtype{}, fmt.Errorf("dtype %q, want float32 or float64", c.Dtype)
}
