package flow

import (
	"errors"
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"

	"lipformer/layers"
	"lipformer/model"
	"lipformer/ops"
	"lipformer/spec"
)

// Stack is the invertible stack of a model, between the embeddings and the final
// LayerNorm: its residual sub-blocks in forward order ([h0.mix,] h0.attn, h0.mlp[, h0.mlp1,
// ...], [h1.mix,] h1.attn, ...), compiled for batches of B sequences of T = context tokens.
type Stack struct {
	Subs []*SubBlock
}

// NewStack compiles the sub-blocks of a float64 model of an invertible architecture for
// batches of the given size. The model's weights and power-iteration vectors are shared:
// run model.Model.PowerIterate before inverting, not between iterations.
func NewStack(m *model.Model, batch int) (*Stack, error) {
	if m.Cfg.Dtype != spec.Float64 {
		return nil, fmt.Errorf("flow: model of dtype %s, want float64 (convert it with WithDtype)", m.Cfg.Dtype)
	}
	if !m.Cfg.Arch.Invertible() {
		return nil, fmt.Errorf("flow: architecture %s has no invertible blocks", m.Cfg.Arch)
	}
	t, d := m.Cfg.Context, m.Cfg.Width
	st := &Stack{}
	for i, b := range m.Invertible() {
		attnNorm, attnBound := SeqInf, b.AttnLipschitzInf
		if b.Attn.Bound == ops.BoundTok2 { // contractive in the token norm, like the MLP
			attnNorm, attnBound = Token2, b.Attn.LipschitzTok2
		}
		attnLip := func() (float64, bool) {
			if b.VNorm != nil { // the dp control
				return b.NaiveAttnLipschitz2(), false
			}
			l, err := attnBound(t)
			if err != nil { // non-finite weights: no number, but still a certified sub-block
				return math.NaN(), true
			}
			return l, true
		}
		type sub struct {
			name   string
			norm   Norm
			branch func(*layers.Graph, *G.Node) (*G.Node, error)
			lip    func() (float64, bool)
		}
		var subs []sub
		if mix := b.Mix; mix != nil { // c-Lipschitz in the token norm
			subs = append(subs, sub{fmt.Sprintf("h%d.mix", i), Token2, mix.Forward, func() (float64, bool) { return mix.Lipschitz2(), true }})
		}
		subs = append(subs, sub{fmt.Sprintf("h%d.attn", i), attnNorm, b.AttnBranch, attnLip})
		for k, mlp := range b.MLPs {
			subs = append(subs, sub{fmt.Sprintf("h%d.%s", i, layers.MLPName(k)), Token2, b.MLPBranch(k), func() (float64, bool) { return mlp.Lipschitz2(), true }})
		}
		for _, sb := range subs {
			s, err := newSubBlock(sb.name, sb.norm, sb.branch, sb.lip, batch, t, d)
			if err != nil {
				st.Close()
				return nil, err
			}
			st.Subs = append(st.Subs, s)
		}
	}
	return st, nil
}

// Forward runs the stack on x (B*T*D values) and returns the input of every sub-block
// followed by the stack's output: len(Subs)+1 batches.
func (st *Stack) Forward(x []float64) ([][]float64, error) {
	states := [][]float64{x}
	for _, s := range st.Subs {
		y, err := s.Forward(states[len(states)-1])
		if err != nil {
			return nil, err
		}
		states = append(states, y)
	}
	return states, nil
}

// Invert inverts the stack's output z one sub-block at a time, the last first, each in its
// own norm. states, when not nil, are the true inputs as Forward returns them, for the
// reconstruction errors. It returns the reconstructed input and one Result per sub-block in
// forward order; a sub-block that does not converge does not stop the others, and the
// error joins every *NotConvergedError.
func (st *Stack) Invert(z []float64, states [][]float64, opt Options) ([]float64, []Result, error) {
	if states != nil && len(states) != len(st.Subs)+1 {
		return nil, nil, fmt.Errorf("flow: %d states for a stack of %d sub-blocks, want %d", len(states), len(st.Subs), len(st.Subs)+1)
	}
	results := make([]Result, len(st.Subs))
	var failed []error
	y := z
	for i := len(st.Subs) - 1; i >= 0; i-- {
		var x []float64
		if states != nil {
			x = states[i]
		}
		xhat, res, err := st.Subs[i].Invert(y, x, opt)
		var nc *NotConvergedError
		if err != nil && !errors.As(err, &nc) {
			return nil, nil, err
		}
		if err != nil {
			failed = append(failed, err)
		}
		results[i], y = res, xhat
	}
	return y, results, errors.Join(failed...)
}

// Close releases every program.
func (st *Stack) Close() {
	for _, s := range st.Subs {
		s.Close()
	}
}
