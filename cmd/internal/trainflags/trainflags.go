// Package trainflags defines the command-line flags of a model and a training run, shared
// by the programs that train (train, sweep).
package trainflags

import (
	"encoding"
	"flag"
	"slices"
	"strings"

	"lipformer/model"
	"lipformer/spec"
	"lipformer/train"
)

// Add registers the model and training flags on fs, bound to cfg and opt, except those
// named in skip (flags a program sets another way, such as the swept ones). It returns the
// -data-dir value.
func Add(fs *flag.FlagSet, cfg *model.Config, opt *train.Options, skip ...string) *string {
	str := func(p *string, name, value, usage string) {
		if !slices.Contains(skip, name) {
			fs.StringVar(p, name, value, usage)
		}
	}
	num := func(p *int, name string, value int, usage string) {
		if !slices.Contains(skip, name) {
			fs.IntVar(p, name, value, usage)
		}
	}
	real := func(p *float64, name string, value float64, usage string) {
		if !slices.Contains(skip, name) {
			fs.Float64Var(p, name, value, usage)
		}
	}
	text := func(p encoding.TextUnmarshaler, name string, value encoding.TextMarshaler, usage string) {
		if !slices.Contains(skip, name) {
			fs.TextVar(p, name, value, usage)
		}
	}
	boolean := func(p *bool, name string, value bool, usage string) {
		if !slices.Contains(skip, name) {
			fs.BoolVar(p, name, value, usage)
		}
	}
	dataDir := new(string)
	text(&cfg.Arch, "arch", cfg.Arch, "architecture: "+spec.ArchNames())
	str(&opt.Data, "data", opt.Data, "corpus: enwik8, shakespeare, a file path, or empty for Newton's Opticks from the Go toolchain")
	str(dataDir, "data-dir", "", "where corpora are found and downloaded (default: the user cache directory, lipformer/)")
	str(&opt.Split, "fractions", opt.Split, "train,valid,test fractions of a file corpus (default 0.9,0.05,0.05; stored as the options' split; eval's and invert's -split names a split)")
	num(&cfg.Layers, "layers", cfg.Layers, "number of blocks")
	num(&cfg.Heads, "heads", cfg.Heads, "attention heads")
	num(&cfg.Width, "width", cfg.Width, "model width D")
	num(&cfg.Hidden, "hidden", cfg.Hidden, "width of each MLP (default 4 x width, shared by an invertible block's -mlp-blocks)")
	num(&cfg.Context, "ctx", cfg.Context, "context length T")
	real(&cfg.Dropout, "dropout", cfg.Dropout, "dropout on residual branches")
	text(&cfg.Norm, "norm", cfg.Norm, "LayerNorm placement: pre, post or none; or ball, a ball norm before each branch (LayerNorm's certified substitute, docs/math.md)")
	real(&cfg.LipC, "lip-c", cfg.LipC, "Lipschitz coefficient c of contractive attention and invertible blocks")
	boolean(&cfg.Tie, "tie", cfg.Tie, "tie the output head to the token embedding (as GPT-2 and nanoGPT)")
	boolean(&cfg.BalanceL2, "balance-l2", cfg.BalanceL2, "initialise tied L2 value maps so that A_h W^V_h starts at the norm of W^V_h (dot-product scale)")
	text(&cfg.L2Bound, "l2-bound", cfg.L2Bound, "bound that contractive tied L2 attention divides by: kim, product, token2 (docs/math.md); not given, contractive-l2 and invertible-l2 take the certified recipe (token2 with -l2-temp and -l2-pos-bias), and naming a bound leaves those two to their flags")
	boolean(&cfg.L2Temp, "l2-temp", cfg.L2Temp, "tied L2 attention learns a temperature per head (free under the product and token2 bounds)")
	boolean(&cfg.L2PosBias, "l2-pos-bias", cfg.L2PosBias, "tied L2 attention learns a bias of its logits per head and relative position (contractive: needs -l2-bound token2)")
	num(&cfg.MLPBlocks, "mlp-blocks", cfg.MLPBlocks, "MLP sub-blocks per invertible block, each a residual c-Lipschitz branch of width -hidden (0: 1; the certified invertible-l2 recipe without -lip-k takes 8 when neither this nor -hidden is given); several thin ones for one wide one give the stack more sub-blocks at the same parameters and FLOPs")
	num(&cfg.Mix, "mix", cfg.Mix, "a mixing sub-block before each attention sub-block: each token takes a learned convex combination of itself and the mix-1 tokens before it, then a linear map, spectrally normalised to -lip-c in invertible blocks (docs/math.md; 0: none)")
	str(&cfg.Activation, "activation", cfg.Activation, "activation of the invertible blocks' MLP branches: elu, or maxmin (each pair of hidden units sorted, 1-Lipschitz and gradient-norm preserving; needs an even -hidden; docs/math.md) (default elu)")
	num(&cfg.TokenBytes, "token-bytes", cfg.TokenBytes, "n-byte tokens: the token table has a row for each byte and the n-1 bytes before it, (V+1)^(n-1) V rows (2: pairs, V (V+1) rows), so that each position's input tells them apart without a sub-block; needs an untied head (docs/math.md, \"n-byte tokens\"; 0 or 1: a row per byte)")
	real(&cfg.MLPGain, "mlp-gain", cfg.MLPGain, "invertible MLP branches learn a scalar input gain starting at this value, which leaves their Lipschitz constant unchanged (0: none)")
	real(&cfg.BallRadius, "ball-radius", cfg.BallRadius, "initial radius of -norm ball's ball norms, in units of sqrt(width) (0: the embeddings' initial scale, so that tokens start on the ball's sphere)")
	real(&cfg.EmbedRadius, "embed-radius", cfg.EmbedRadius, "with -lip-k: hold every token embedding in the ball of this radius, so that the certified logit range is at most 2 x radius x K (docs/math.md; 0: free embeddings)")
	real(&cfg.LipK, "lip-k", cfg.LipK, "bound the whole model, from the input embeddings to the logits, by this Lipschitz constant in the token norm: invertible-l2 with a ball norm for the final LayerNorm and a spectrally normalised head (docs/math.md; 0: no bound)")
	real(&cfg.EmbedStd, "embed-std", cfg.EmbedStd, "initial scale of the token and position embeddings, the residual stream's scale at initialisation (0: the weights' init std)")
	text(&cfg.Dtype, "dtype", cfg.Dtype, "float32 or float64")
	num(&opt.Batch, "batch", opt.Batch, "sequences of the context length per optimizer step")
	num(&opt.Steps, "steps", opt.Steps, "optimizer steps")
	real(&opt.LR, "lr", opt.LR, "peak learning rate")
	real(&opt.MinLR, "min-lr", opt.MinLR, "final learning rate of the cosine schedule")
	num(&opt.Warmup, "warmup", opt.Warmup, "linear warm-up steps (when not given and not below -steps: steps/10)")
	str(&opt.Schedule, "schedule", opt.Schedule, "learning-rate schedule: "+strings.Join(train.ScheduleNames(), ", "))
	real(&opt.Beta1, "beta1", opt.Beta1, "Adam beta1")
	real(&opt.Beta2, "beta2", opt.Beta2, "Adam beta2")
	real(&opt.WeightDecay, "weight-decay", opt.WeightDecay, "AdamW weight decay of matrices")
	real(&opt.Muon, "muon", opt.Muon, "train the blocks' weight matrices with Muon (orthogonalised momentum, docs/math.md) at this multiple of -lr, the rest with AdamW (0: AdamW for all)")
	real(&opt.Clip, "clip", opt.Clip, "global gradient-norm clip (0: off)")
	num(&opt.EvalEvery, "eval-every", opt.EvalEvery, "steps between validations and checkpoints")
	num(&opt.EvalBytes, "eval-bytes", opt.EvalBytes, "validation bytes scored at each validation (0: all)")
	num(&opt.PowerIters, "power-iters", opt.PowerIters, "power-iteration steps that refresh the spectral normalisations and token-norm bounds before each training step (0: 1, as runs stored without the setting)")
	num(&opt.FinalPowerIters, "final-power-iters", opt.FinalPowerIters, "power-iteration steps on the final weights before the last validation, the final scores and the last checkpoint, so that the function scored is the one certified and inverted (0: none, as runs stored without the setting)")
	num(&opt.LogLipschitz, "log-lipschitz", opt.LogLipschitz, "every N steps, log the tied L2 attention layers' bounds, contractive scales and certified constants to metrics.jsonl (0: never)")
	if !slices.Contains(skip, "seed") {
		fs.Uint64Var(&opt.Seed, "seed", opt.Seed, "seed of initialisation, batches and dropout")
	}
	return dataDir
}

// Given reports whether the flag was set on the command line.
func Given(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

// Recipe reports whether new runs take the certified recipe of their architecture
// (spec.Model.WithCertifiedRecipe): when -l2-bound is given neither on the command line
// nor in the config file.
func Recipe(fs *flag.FlagSet) bool { return !Given(fs, "l2-bound") }

// Finish applies the defaults that depend on other flags: without -warmup, a warm-up that
// would not end before the last step becomes steps/10.
func Finish(fs *flag.FlagSet, opt *train.Options) {
	if !Given(fs, "warmup") && opt.Warmup >= opt.Steps {
		opt.Warmup = opt.Steps / 10
	}
}
