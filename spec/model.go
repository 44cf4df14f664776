// Package spec is the one specification of a lipformer language model: its architecture,
// sizes and options as typed values, parsed and validated once, saved as JSON in every
// checkpoint and passed whole to the layers that build the model.
package spec

import (
	"fmt"
	"math"
	"strings"

	"lipformer/ops"
)

// Model describes a model. It is saved inside every checkpoint, so evaluation, sampling
// and resuming need no flags to rebuild the model. Its JSON names are the checkpoints'.
type Model struct {
	Arch    Arch    `json:"arch"`
	Layers  int     `json:"layers"`  // number of blocks
	Heads   int     `json:"heads"`   // attention heads per block
	Width   int     `json:"width"`   // D
	Hidden  int     `json:"hidden"`  // width of each MLP; 0 means 4D over the MLPs of a block (HiddenWidth)
	Context int     `json:"context"` // T, the longest sequence, and the number of learned positions
	Vocab   int     `json:"vocab"`   // V, distinct bytes of the corpus
	Dropout float64 `json:"dropout"` // on residual branches, training only
	Norm    Norm    `json:"norm"`    // normalisation placement (never LayerNorm for invertible archs)
	LipC    float64 `json:"lip_c"`   // Lipschitz coefficient c of contractive attention and invertible branches
	Dtype   Dtype   `json:"dtype"`
	Std     float64 `json:"init_std"`
	// EmbedStd is the initial scale of the token and position embeddings, which sets the
	// scale of the residual stream that ball norms project; 0 means Std.
	EmbedStd float64 `json:"embed_std,omitempty"`
	Tie      bool    `json:"tie"` // the head is the token embedding transposed (GPT-2, nanoGPT)
	// BalanceL2 starts tied L2 value paths at dot-product scale (layers.Attention.BalanceL2Values).
	BalanceL2 bool `json:"balance_l2"`
	// L2Bound is the bound contractive tied L2 attention divides by (docs/math.md): kim (Kim
	// et al.'s product of separate norms, also what a checkpoint without the key means),
	// product (the inf-norm bound from the norms of the products the Jacobian contains) or
	// token2 (the token-norm bound, spectral norms).
	L2Bound ops.BoundForm `json:"l2_bound,omitempty"`
	// L2Temp gives tied L2 attention a learned per-head temperature (layers.Attention.LogTemp).
	L2Temp bool `json:"l2_temp,omitempty"`
	// L2PosBias gives tied L2 attention a learned position bias of the logits
	// (layers.Attention.PosBias); contractive attention then needs the token2 bound.
	L2PosBias bool `json:"l2_pos_bias,omitempty"`
	// MLPGain > 0 gives the MLP branches of invertible architectures a learned scalar input
	// gain starting at MLPGain (layers.SpectralMLP.LogGain), which leaves their Lipschitz
	// constant unchanged; 0 for none.
	MLPGain float64 `json:"mlp_gain,omitempty"`
	// MLPBlocks is the number of MLP sub-blocks in each invertible block, each a residual
	// c-Lipschitz branch of width HiddenWidth after the attention sub-block's; 0 means 1
	// (MLPSubBlocks), or RecipeMLPBlocks under the certified recipe. Several thin ones in
	// place of one wide one give the stack more sub-blocks at the same parameters and FLOPs
	// (docs/math.md, "What depth buys an invertible stack").
	MLPBlocks int `json:"mlp_blocks,omitempty"`
	// Mix > 0 puts a mixing sub-block before each block's attention sub-block: each token
	// takes a learned convex combination of itself and the Mix-1 tokens before it, then a
	// linear map (layers.Mix; in an invertible block spectrally normalised to c, docs/math.md,
	// "The mixing sub-block"). 0: none.
	Mix int `json:"mix,omitempty"`
	// BallRadius is the initial radius of the ball norms of Norm ball, in units of
	// sqrt(D); 0 means the embeddings' initial scale (EffectiveEmbedStd), so that the
	// stream's tokens, of norm about sqrt(2D) times it, start outside the ball.
	BallRadius float64 `json:"ball_radius,omitempty"`
	// LipK > 0 bounds the whole model, from the input embeddings (token plus position
	// vectors, in the token norm max_i ||x_i||_2) to the logits, by LipK (docs/math.md,
	// "A model certified end to end"): invertible-l2 under the token2 bound, its final
	// LayerNorm a ball norm, its untied head spectrally normalised to HeadGain. 0: no bound.
	LipK float64 `json:"lip_k,omitempty"`
	// EmbedRadius > 0 holds every token embedding in the ball of that radius (absolute
	// units; layers.Embedding.Radius), so that two texts' embedded inputs are at most 2
	// EmbedRadius apart in the token norm and LipK bounds the logit range by 2 EmbedRadius
	// LipK (docs/math.md, "The certified logit range"). Only with LipK; 0: free embeddings.
	EmbedRadius float64 `json:"embed_radius,omitempty"`
	// Activation is the 1-Lipschitz activation of an invertible block's MLP branches: elu
	// ("", the default) or maxmin (each pair of hidden units sorted; docs/math.md, "MaxMin").
	// Only invertible architectures have such branches.
	Activation string `json:"activation,omitempty"`
	// TokenBytes > 1 gives the token table a row for each byte and the TokenBytes - 1 bytes
	// before it in its window (TokenRow): 2, pair tokens, 3, triples. Each position's input
	// vector then tells those bytes apart, a look-up that a sum of the bytes' contributions
	// cannot make within a small Lipschitz constant (docs/math.md, "n-byte tokens"). The
	// head is then untied. 0 or 1: a row per byte.
	TokenBytes int `json:"token_bytes,omitempty"`
}

// MaxTokenTable is the largest table of n-byte tokens, in rows times width, that Validate
// accepts: 2^27 values, 512 MiB in float32 before the optimizer's two moments. (A byte
// table is held to the machine's memory like every other parameter.)
const MaxTokenTable = 1 << 27

// TokenRows is the number of rows of the token table: V, or with TokenBytes n > 1,
// (V + 1)^(n-1) V (a start symbol stands for the bytes before a window), or -1 when that
// exceeds MaxTokenTable (Validate refuses it).
func (m Model) TokenRows() int {
	rows := m.Vocab
	for range m.TokenBytes - 1 {
		if rows > MaxTokenTable/(m.Vocab+1) {
			return -1
		}
		rows *= m.Vocab + 1
	}
	return rows
}

// TokenRow is the row of the token table that position t of a window reads: window[t]
// itself, or with TokenBytes n > 1 the number whose digits in base V + 1 are the n - 1
// bytes before it, each plus 1 (0 before the window's start), oldest first, times V plus
// window[t]; so the rows 0..V-1 are the first position's. Ids are not checked.
func (m Model) TokenRow(window []int, t int) int {
	r := 0
	for k := m.TokenBytes - 1; k >= 1; k-- {
		d := 0
		if t-k >= 0 {
			d = window[t-k] + 1
		}
		r = r*(m.Vocab+1) + d
	}
	return r*m.Vocab + window[t]
}

// Default is a small pre-LN L2 model: 4 layers, 4 heads, width 128, context 64.
func Default() Model {
	return Model{Arch: L2, Layers: 4, Heads: 4, Width: 128, Context: 64, Norm: PreLN, LipC: 0.9, Dtype: Float32, Std: 0.02}
}

// Validate returns an error naming every field that is out of range or contradicts another.
func (m Model) Validate() error {
	var errs []string
	bad := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	if m.Arch.String() == "" {
		bad("arch unset, want one of %s", joinNames(Archs))
	}
	if m.Layers < 1 {
		bad("layers %d, want >= 1", m.Layers)
	}
	if m.Width < 1 || m.Heads < 1 || m.Width%m.Heads != 0 {
		bad("width %d with %d heads, want a positive width divisible by the heads", m.Width, m.Heads)
	}
	if m.Hidden < 0 {
		bad("hidden %d, want >= 0 (0 means 4 x width over a block's MLPs)", m.Hidden)
	}
	if m.Context < 1 {
		bad("context %d, want >= 1", m.Context)
	}
	if m.Vocab < 1 || m.Vocab > 256 {
		bad("vocab %d, want 1..256 (bytes)", m.Vocab)
	}
	if m.Dropout < 0 || m.Dropout >= 1 {
		bad("dropout %g, want 0 <= p < 1", m.Dropout)
	}
	if m.Norm.String() == "" {
		bad("norm unset, want pre, post, none or ball")
	}
	if m.Dtype.String() == "" || m.Dtype > Float64 {
		bad("dtype %d, want float32 or float64", uint8(m.Dtype))
	}
	if _, err := m.L2Bound.MarshalText(); err != nil {
		bad("%v", err)
	}
	if m.Arch == ContractiveL2 && !(m.LipC > 0) {
		bad("lip_c %g, want > 0 for contractive attention", m.LipC)
	}
	if m.Arch.Invertible() && !(m.LipC > 0 && m.LipC < 1) {
		bad("lip_c %g, want 0 < c < 1 for an invertible architecture", m.LipC)
	}
	if m.Arch.Invertible() && m.Norm == PostLN {
		bad("norm post: an invertible architecture has no LayerNorm in its blocks (want none or ball; pre is taken as none)")
	}
	if m.Arch == InvertibleL2 && m.Norm == BallPre && m.L2Bound != ops.BoundTok2 {
		bad("norm ball with l2_bound %v: the ball norm is 1-Lipschitz in the token norm, not the inf-norm; want l2_bound token2", m.L2Bound)
	}
	if !(m.BallRadius >= 0) || math.IsInf(m.BallRadius, 0) {
		bad("ball_radius %g, want finite and >= 0 (0: the embeddings' init scale)", m.BallRadius)
	}
	if m.BallRadius > 0 && m.Norm != BallPre && !(m.LipK > 0) {
		bad("ball_radius with norm %v and no lip_k: only norm ball and a model bounded end to end have ball norms", m.Norm)
	}
	if m.L2Temp && !m.Arch.TiedL2() {
		bad("l2_temp: arch %v has no tied L2 attention", m.Arch)
	}
	if m.L2PosBias && !m.Arch.TiedL2() {
		bad("l2_pos_bias: arch %v has no tied L2 attention", m.Arch)
	}
	if m.L2PosBias && m.Contraction() > 0 && m.L2Bound != ops.BoundTok2 {
		bad("l2_pos_bias with l2_bound %v: a contractive layer with a position bias divides by the token2 bound", m.L2Bound)
	}
	if !(m.MLPGain >= 0) || math.IsInf(m.MLPGain, 0) {
		bad("mlp_gain %g, want finite and >= 0 (0: none)", m.MLPGain)
	}
	if m.MLPGain > 0 && !m.Arch.Invertible() {
		bad("mlp_gain: arch %v has no invertible MLP branches", m.Arch)
	}
	if m.MLPBlocks < 0 {
		bad("mlp_blocks %d, want >= 0 (0: 1)", m.MLPBlocks)
	}
	if m.MLPBlocks > 1 && !m.Arch.Invertible() {
		bad("mlp_blocks %d: arch %v has one MLP per block; only invertible blocks take several", m.MLPBlocks, m.Arch)
	}
	if m.Mix < 0 || m.Mix > m.Context {
		bad("mix %d with context %d, want 0 <= mix <= context (0: no mixing sub-block)", m.Mix, m.Context)
	}
	if act, err := ops.ParseActivation(m.Activation); err != nil {
		bad("%v", err)
	} else if act == ops.ActMaxMin && !m.Arch.Invertible() {
		bad("activation maxmin with arch %v: only the invertible blocks' spectral MLPs take it (the others use GELU)", m.Arch)
	} else if act == ops.ActMaxMin && m.HiddenWidth()%2 != 0 {
		bad("activation maxmin with hidden width %d: MaxMin pairs hidden units, want an even width", m.HiddenWidth())
	}
	if !(m.LipK >= 0) || math.IsInf(m.LipK, 0) {
		bad("lip_k %g, want finite and >= 0 (0: none)", m.LipK)
	}
	if m.LipK > 0 && (m.Arch != InvertibleL2 || m.L2Bound != ops.BoundTok2 || m.Tie) {
		bad("lip_k with arch %v, l2_bound %v and tie %t: a model bounded end to end is invertible-l2 under the token2 bound with an untied head "+
			"(the contractive construction's certified form, ball norms before the branches, is invertible-l2 with norm ball)", m.Arch, m.L2Bound, m.Tie)
	}
	if !(m.EmbedRadius >= 0) || math.IsInf(m.EmbedRadius, 0) {
		bad("embed_radius %g, want finite and >= 0 (0: none)", m.EmbedRadius)
	}
	if m.EmbedRadius > 0 && !(m.LipK > 0) {
		bad("embed_radius without lip_k: the radius gives a bounded model's constant its units")
	}
	if m.TokenBytes < 0 || m.TokenBytes > m.Context {
		bad("token_bytes %d with context %d, want 0 <= token_bytes <= context (0 or 1: a row per byte)", m.TokenBytes, m.Context)
	} else if m.TokenBytes > 1 && m.Vocab >= 1 && m.Width >= 1 && (m.TokenRows() < 0 || m.TokenRows() > MaxTokenTable/m.Width) {
		bad("token_bytes %d with vocab %d and width %d: a token table of (vocab+1)^%d x vocab rows of the width exceeds %d values; want fewer token bytes",
			m.TokenBytes, m.Vocab, m.Width, m.TokenBytes-1, MaxTokenTable)
	}
	if m.TokenBytes > 1 && m.Tie {
		bad("token_bytes %d with tie: the head has a column per byte, the token table a row per %d bytes; want an untied head", m.TokenBytes, m.TokenBytes)
	}
	if !(m.Std > 0) {
		bad("init_std %g, want > 0", m.Std)
	}
	if !(m.EmbedStd >= 0) || math.IsInf(m.EmbedStd, 0) {
		bad("embed_std %g, want finite and >= 0 (0: init_std)", m.EmbedStd)
	}
	if len(errs) > 0 {
		return fmt.Errorf("model config: %s", strings.Join(errs, "; "))
	}
	return nil
}

// BeforeCorpus returns m with a vocabulary that stands for any corpus's, to validate and
// estimate it before the corpus is loaded: 256 bytes, the most; with n-byte tokens 2, since
// their table, (V + 1)^(n-1) V rows, is checked once the corpus gives V.
func (m Model) BeforeCorpus() Model {
	m.Vocab = 256
	if m.TokenBytes > 1 {
		m.Vocab = 2
	}
	return m
}

// HiddenWidth is the width of each MLP: Hidden, or when it is 0 4 Width shared by the
// block's MLPSubBlocks (4 Width / m, at least 1), so that m thin MLPs hold the parameters
// and FLOPs of one.
func (m Model) HiddenWidth() int {
	if m.Hidden == 0 {
		return max(4*m.Width/m.MLPSubBlocks(), 1)
	}
	return m.Hidden
}

// MLPSubBlocks is the number of MLP sub-blocks of each block: MLPBlocks, or 1 when it is 0.
func (m Model) MLPSubBlocks() int { return max(m.MLPBlocks, 1) }

// SubBlocks is the number of residual sub-blocks of the stack: each block's mixing
// sub-block (with Mix), its attention sub-block and its MLPSubBlocks.
func (m Model) SubBlocks() int { return m.Layers * (m.MixSubBlocks() + 1 + m.MLPSubBlocks()) }

// MixSubBlocks is the number of mixing sub-blocks of each block: 1 with Mix, else 0.
func (m Model) MixSubBlocks() int {
	if m.Mix > 0 {
		return 1
	}
	return 0
}

// Contraction is the coefficient c of contractive attention or invertible blocks, or 0 for
// plain attention.
func (m Model) Contraction() float64 {
	if m.Arch.Contractive() {
		return m.LipC
	}
	return 0
}

// Built returns m as the model is built: an invertible architecture's Norm other than ball
// becomes none, since its blocks hold no LayerNorm.
func (m Model) Built() Model {
	if m.Arch.Invertible() && m.Norm != BallPre {
		m.Norm = NoLN
	}
	return m
}

// WithCertifiedRecipe returns m with, for contractive-l2 and invertible-l2, the certified
// recipe (docs/math.md): the token2 bound, per-head temperatures and a position bias; for
// invertible-l2 without an MLP gain an MLP gain starting at RecipeMLPGain, and with neither
// MLPBlocks nor Hidden set and no LipK RecipeMLPBlocks MLP sub-blocks per block (of width
// 4D / RecipeMLPBlocks; a model bounded by K pays 1 + c of it for each sub-block, a trade
// not measured). New runs take it unless a bound is named on the command line.
func (m Model) WithCertifiedRecipe() Model {
	if m.Arch == ContractiveL2 || m.Arch == InvertibleL2 {
		m.L2Bound, m.L2Temp, m.L2PosBias = ops.BoundTok2, true, true
		if m.Arch == InvertibleL2 && m.MLPGain == 0 {
			m.MLPGain = RecipeMLPGain
		}
		if m.Arch == InvertibleL2 && m.MLPBlocks == 0 && m.Hidden == 0 && m.LipK == 0 {
			m.MLPBlocks = RecipeMLPBlocks
		}
	}
	return m
}

// RecipeMLPBlocks is the number of MLP sub-blocks per block of the certified invertible-l2
// recipe: eight of width D/2 are 0.19 bpc better than one of width 4D at the same steps
// on Tiny Shakespeare and 0.32 on enwik7, and 0.02 better at the same training time, where
// four of width D do best (EXPERIMENTS.md, "Several MLP sub-blocks per invertible block").
const RecipeMLPBlocks = 8

// RecipeMLPGain is the initial MLP gain of the certified invertible-l2 recipe. Started at
// 8 or more, trained gains reach e^6.6 to e^7.7; started at 1, e^1.3 to e^3.6 and a worse
// model (EXPERIMENTS.md, "The invertible block's MLP gain").
const RecipeMLPGain = 256

// Uses reports whether the setting named by its JSON key shapes a model of m's
// architecture: balance_l2, l2_temp and l2_pos_bias only tied L2 attention, l2_bound only
// contractive tied L2 attention, lip_c only contractive and invertible architectures,
// mlp_gain and mlp_blocks only invertible ones, ball_radius only norm ball, lip_k only invertible-l2,
// embed_radius only a model with lip_k, every other key always.
func (m Model) Uses(key string) bool {
	switch key {
	case "balance_l2", "l2_temp", "l2_pos_bias":
		return m.Arch.TiedL2()
	case "l2_bound":
		return m.Arch == ContractiveL2 || m.Arch == InvertibleL2
	case "lip_c":
		return m.Arch.Contractive()
	case "mlp_gain", "mlp_blocks":
		return m.Arch.Invertible()
	case "ball_radius":
		return m.Norm == BallPre || m.LipK > 0
	case "lip_k":
		return m.Arch == InvertibleL2
	case "embed_radius":
		return m.LipK > 0
	}
	return true
}

// MLPActivation is the activation of the invertible blocks' MLP branches (Activation; ELU
// when it does not parse, which Validate refuses).
func (m Model) MLPActivation() ops.Activation {
	act, err := ops.ParseActivation(m.Activation)
	if err != nil {
		return ops.ActELU
	}
	return act
}

// HeadGain is the spectral norm of the head of a model bounded by LipK: LipK over the
// product of its SubBlocks sub-blocks' bounds 1 + LipC (the final ball norm is
// 1-Lipschitz), so that the product of the whole model's factors is LipK.
func (m Model) HeadGain() float64 { return m.LipK / math.Pow(1+m.LipC, float64(m.SubBlocks())) }

// EffectiveEmbedStd is the embeddings' initial scale: EmbedStd, or Std when it is 0.
func (m Model) EffectiveEmbedStd() float64 {
	if m.EmbedStd == 0 {
		return m.Std
	}
	return m.EmbedStd
}

// EffectiveBallRadius is the ball norms' initial radius in units of sqrt(D): BallRadius, or
// EffectiveEmbedStd when it is 0.
func (m Model) EffectiveBallRadius() float64 {
	if m.BallRadius == 0 {
		return m.EffectiveEmbedStd()
	}
	return m.BallRadius
}
