package model

import (
	"fmt"
	"runtime"
	"strings"

	"lipformer/spec"
)

// Memory is an estimate of the peak memory that a model and its programs hold, in bytes,
// by what holds it. Bytes are float64: the sizes that a mistyped flag asks for overflow
// an int.
type Memory struct {
	Weights   float64 // parameters and buffers
	Optimizer float64 // training: the gradients the optimizer reads and AdamW's two moments
	// Graph is the values of the programs' nodes, each of which an op keeps from run to run
	// (docs/performance.md, "Memory of the ops"): activations, their gradients and the
	// weights' gradients and normalised copies. The decoder's activations and caches count
	// here too.
	Graph float64
	// Attention is the attention probabilities P, (B*H, T, T), that a training program
	// keeps for its backward, and the attention ops' scratch: two T x T matrices per
	// worker and op.
	Attention float64
	Data      float64 // the corpus and its tokens, when the caller counts them (AddData)
	Runtime   float64 // the Go runtime, the program's code and small allocations: RuntimeBytes
}

// RuntimeBytes is the memory that Memory counts for the Go runtime, the program's code and
// its small allocations: a training run of a one-layer model of width 32 peaks at 42 MB
// (docs/runs.md, "Memory").
const RuntimeBytes = 64 << 20

// Total is the sum of the parts.
func (m Memory) Total() float64 {
	return m.Weights + m.Optimizer + m.Graph + m.Attention + m.Data + m.Runtime
}

// AddData returns m with the memory of a corpus of n bytes counted: the text and its tokens.
func (m Memory) AddData(n int) Memory {
	m.Data += 2 * float64(n)
	return m
}

// String is the total and its non-zero parts: "1.2 GB (weights 10 MB, ...)".
func (m Memory) String() string {
	var parts []string
	for _, p := range []struct {
		name string
		b    float64
	}{{"weights", m.Weights}, {"optimizer", m.Optimizer}, {"activations and gradients", m.Graph},
		{"attention", m.Attention}, {"corpus", m.Data}, {"runtime", m.Runtime}} {
		if p.b > 0 {
			parts = append(parts, p.name+" "+Bytes(p.b))
		}
	}
	return fmt.Sprintf("%s (%s)", Bytes(m.Total()), strings.Join(parts, ", "))
}

// Bytes formats a number of bytes in decimal units: 512 B, 3.4 MB, 13.5 GB.
func Bytes(b float64) string {
	const unit = 1000
	if b < unit {
		return fmt.Sprintf("%.0f B", b)
	}
	for _, u := range []string{"kB", "MB", "GB", "TB", "PB"} {
		b /= unit
		if b < unit || u == "PB" {
			return fmt.Sprintf("%.1f %s", b, u)
		}
	}
	return "" // not reached
}

// EstimateMemory estimates the peak memory of a model of cfg (Vocab 0 counts as
// Config.BeforeCorpus does: 256, or 2 with n-byte tokens, whose table is counted once the
// corpus gives V) with a program for each of modes (Train or Eval) for batches of `batch`
// sequences, before any of it is allocated. The node counts come from the graphs the layers build: with N = B*T
// rows, D the width, F the MLP width, k D the packed projection (k = 3, or 2 for tied L2)
// and V the vocabulary, a training graph holds per layer at most 16 N*D + 4 N*F + 2 N*kD
// values and an evaluation graph half that; the embeddings and head add 6 N*D + 2 N*V and
// 4 N*D + N*V; the weights' gradients and normalised copies add per layer 4 D^2 + 2 D*F
// (dp, l2-untied), 18 D^2 + 2 D*F (tied L2: the value maps and the bounds) or 18 D^2 +
// 10 D*F (invertible: spectral normalisation of every matrix) in training, and 0, 3 D^2 or
// 4 D^2 + 4 D*F in evaluation. Each further MLP sub-block of an invertible block adds its
// share: 8 N*D + 4 N*F values in training, 10 D*F of weights, and half in evaluation. A
// sub-block fused into one op (ops.MLPResidual: no ball norm, no dropout) keeps about
// 2 N*D + 3 N*F in training (2 N*D + 2 N*F with ELU, whose pre-activations it does not
// keep) and N*D + 2 N*F in evaluation, which the estimate does not credit: for those
// models it errs high, by at most 1.7 times in the tests. TestMemoryCoversTheGraphs
// checks these against the graphs of every architecture; docs/runs.md, "Memory", against
// the peak resident memory of runs.
// A training program comes with the optimizer's three copies of the parameters.
func EstimateMemory(cfg Config, batch int, modes ...Mode) (Memory, error) {
	s, err := memShapeOf(cfg, batch)
	if err != nil {
		return Memory{}, err
	}
	m := Memory{Weights: s.params() * s.size, Runtime: RuntimeBytes}
	for _, mode := range modes {
		switch mode {
		case Train:
			m.Optimizer += 3 * s.params() * s.size
			m.Graph += s.graph(true) * s.size
			m.Attention += s.attention(true) * s.size
		case Eval:
			m.Graph += s.graph(false) * s.size
			m.Attention += s.attention(false) * s.size
		default:
			return Memory{}, fmt.Errorf("memory: a %s program is not estimated (EstimateDecoderMemory estimates sampling)", mode)
		}
	}
	return m, nil
}

// EstimateDecoderMemory estimates the peak memory of a model of cfg and a decoder of batch
// sequences (NewBatchDecoder): the parameters, the decoder's copies of the effective and
// packed weights, its activations (N = B*T rows of at most 7 D + 2 F values), the caches
// of every layer (N rows of 2 D + H, and D more with a mixing sub-block) and a T x T
// scratch per worker.
func EstimateDecoderMemory(cfg Config, batch int) (Memory, error) {
	s, err := memShapeOf(cfg, batch)
	if err != nil {
		return Memory{}, err
	}
	rows := s.b * s.t
	graph := 2*s.params() + rows*(7*s.d+2*s.f) + s.layers*rows*(2*s.d+s.h+s.mix*s.d) + s.b*s.v
	return Memory{Weights: s.params() * s.size, Graph: graph * s.size, Attention: s.workers * (s.t*s.t + s.t) * s.size,
		Runtime: RuntimeBytes}, nil
}

// memShape holds the sizes of a configuration that its memory estimate uses, as floats.
type memShape struct {
	b, t, d, f, h, v, k, layers float64
	mlps                        float64 // MLP sub-blocks per layer
	mix, taps                   float64 // mixing sub-blocks per layer (0 or 1), and their taps
	rows                        float64 // rows of the token table: v, or (v + 1)^(n-1) v with n-byte tokens
	size                        float64 // bytes per element
	workers                     float64 // attention's goroutines: GOMAXPROCS
	arch                        spec.Arch
	bias, untied, bounded       bool // position bias; untied head; head normalised (LipK)
	ballTable                   bool // token table projected onto a ball (EmbedRadius)
}

// memShapeOf checks cfg's sizes and batch for the estimate.
func memShapeOf(cfg Config, batch int) (memShape, error) {
	if batch < 1 || cfg.Layers < 1 || cfg.Heads < 1 || cfg.Width < 1 || cfg.Context < 1 || cfg.Hidden < 0 || cfg.Arch.String() == "" {
		return memShape{}, fmt.Errorf("memory: batch %d, layers %d, heads %d, width %d, hidden %d, context %d, arch %q: want positive sizes and an architecture",
			batch, cfg.Layers, cfg.Heads, cfg.Width, cfg.Hidden, cfg.Context, cfg.Arch)
	}
	v := cfg.Vocab
	if v == 0 {
		v = cfg.BeforeCorpus().Vocab
	}
	size := 4.0
	if cfg.Dtype == spec.Float64 {
		size = 8
	}
	k := 3.0
	if cfg.Arch.TiedL2() {
		k = 2
	}
	rows := float64(v)
	for range cfg.TokenBytes - 1 {
		rows *= float64(v + 1)
	}
	return memShape{b: float64(batch), t: float64(cfg.Context), d: float64(cfg.Width), f: float64(cfg.HiddenWidth()), h: float64(cfg.Heads),
		v: float64(v), rows: rows, k: k, layers: float64(cfg.Layers), mlps: float64(cfg.MLPSubBlocks()), mix: float64(cfg.MixSubBlocks()), taps: float64(cfg.Mix), size: size, workers: float64(runtime.GOMAXPROCS(0)), arch: cfg.Arch,
		bias: cfg.L2PosBias, untied: !cfg.Tie, bounded: cfg.LipK > 0, ballTable: cfg.EmbedRadius > 0}, nil
}

// params bounds the number of parameters and buffers: the embeddings, per layer the
// packed projection, W^O, the MLP and the mixing sub-block with their biases, norms,
// temperatures, taps, position biases and power-iteration vectors, the final norm and the
// head.
func (s memShape) params() float64 {
	layer := (s.k+1)*s.d*s.d + s.mlps*(2*s.d*s.f+4*s.f+4*s.d) + s.mix*(s.d*s.d+3*s.d+s.taps) + (s.k+12)*s.d + s.h*(s.t+2) + 16
	p := (s.rows+s.t)*s.d + s.layers*layer + 4*s.d
	if s.untied {
		p += s.d*s.v + s.d + s.v
	}
	return p
}

// graph is the number of values of the nodes of a training or an evaluation program, as
// EstimateMemory describes them, with per layer and globally a margin for the vectors and
// scalars of the norms, bounds and biases.
func (s memShape) graph(train bool) float64 {
	n := s.b * s.t
	dd, df := s.d*s.d, s.d*s.f
	var weights float64
	switch {
	case s.arch.Invertible() && train:
		weights = 18*dd + 10*df*s.mlps
	case s.arch.Invertible():
		weights = 4*dd + 4*df*s.mlps
	case s.arch.TiedL2() && train:
		weights = 18*dd + 2*df
	case s.arch.TiedL2():
		weights = 3 * dd
	case train:
		weights = (s.k+1)*dd + 2*df
	}
	small := 32*s.d*s.mlps + 4*s.f*s.mlps + 4*s.h*s.t + 64
	rows := 8*n*s.d + 2*n*s.f + n*s.k*s.d + (s.mlps-1)*(4*n*s.d+2*n*s.f) + s.mix*4*n*s.d
	weights += s.mix * 4 * dd
	global := 4*n*s.d + n*s.v
	if s.bounded {
		global += 2 * s.d * s.v
	}
	if train {
		rows *= 2
		global = 6*n*s.d + 2*n*s.v + 2*(s.rows+s.t)*s.d + 4*s.d*s.v
	}
	if s.ballTable { // the table projected onto the ball, which the look-up reads
		global += s.rows * s.d
	}
	return s.layers*(rows+weights+small) + global + 64*s.d
}

// attention is the number of elements the attention ops of a program keep beyond their
// outputs: per layer, a training program's P (B*H, T, T) and the scratch of its forward
// and backward op, an evaluation program's forward scratch, each GOMAXPROCS jobs' P and dP
// (T, T) and two vectors (T); a position bias's per-job gradients (B*H, T) in float64.
func (s memShape) attention(train bool) float64 {
	scratch := min(s.workers, s.b*s.h) * (2*s.t*s.t + 2*s.t)
	if !train {
		return s.layers * scratch
	}
	a := s.b*s.h*s.t*s.t + 2*scratch
	if s.bias {
		a += s.b * s.h * s.t * 8 / s.size
	}
	return s.layers * a
}
