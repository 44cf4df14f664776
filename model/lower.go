package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/floats"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/layers"
	"lipformer/spec"
)

// WholeLower is a searched lower bound on the Lipschitz constant of the whole map that
// Certificate bounds, from the embedded sequence to the logits in the token norm: the
// largest spectral norm of a block J_ji (V, D) of its Jacobian, the sensitivity of position
// j's logits to token i's embedding, met at embedded windows of random tokens. Moving token
// i alone by v changes the logits by J v, whose token norm is at least ||J_ji v||, so every
// block's spectral norm is at most the constant. Each value is measured as a secant,
// ||z_j(x + h v) - z_j(x - h v)|| / (2h ||v||), so it is a lower bound even where the map
// has kinks (ELU, the ball norm's sphere).
type WholeLower struct {
	Best    float64 `json:"best"`    // the largest sigma(J_ji) met
	Row     int     `json:"row"`     // its j, the position whose logits move
	Col     int     `json:"col"`     // its i, the token moved
	Windows int     `json:"windows"` // windows searched
	// Blocks are the blocks searched, each with the largest sigma(J_ji) met over the
	// windows: how the constant is spent on the current token (j = i) and on earlier ones.
	Blocks []BlockLower `json:"blocks"`
}

// BlockLower is the largest spectral norm of one block J_ji met over the windows.
type BlockLower struct {
	Row  int     `json:"row"` // j, the position whose logits move
	Col  int     `json:"col"` // i, the token moved
	Best float64 `json:"best"`
}

// LowerBound searches windows random windows of token-table rows (drawn from seed; with
// n-byte tokens any row at any position, a wider set of inputs than texts make) for the largest
// block of the Jacobian of the embedded map: at each, the blocks (i, i) at positions 0,
// T/4, T/2, 3T/4 and T-1, (T-1, T-2) and (T-1, 0), each by iters steps of power iteration with
// central-difference JVPs and exact VJPs, on a float64 copy of the model. progress, if not
// nil, is called after each block with the blocks done and their total.
func (m *Model) LowerBound(windows, iters int, seed uint64, progress func(done, total int)) (*WholeLower, error) {
	if windows < 1 || iters < 1 {
		return nil, fmt.Errorf("lower bound: %d windows of %d iterations, want >= 1 each", windows, iters)
	}
	m64, err := m.WithDtype(spec.Float64)
	if err != nil {
		return nil, err
	}
	em, err := newEmbeddedMap(m64)
	if err != nil {
		return nil, err
	}
	defer em.vm.Close()
	T, D, R := m.Cfg.Context, m.Cfg.Width, m.Cfg.TokenRows()
	var pairs [][2]int // (j, i), each once
	for _, ji := range [][2]int{{0, 0}, {T / 4, T / 4}, {T / 2, T / 2}, {3 * T / 4, 3 * T / 4}, {T - 1, T - 1}, {T - 1, max(T-2, 0)}, {T - 1, 0}} {
		if !slices.Contains(pairs, ji) {
			pairs = append(pairs, ji)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x6c6f776572)) // "lower"
	out := &WholeLower{Windows: windows, Blocks: make([]BlockLower, len(pairs))}
	for k, ji := range pairs {
		out.Blocks[k].Row, out.Blocks[k].Col = ji[0], ji[1]
	}
	tok, pos := m64.Tok.Rows(), m64.Pos.W.Float64s()
	done, total := 0, windows*len(pairs)
	for range windows {
		x := make([]float64, T*D) // (T, D)
		for p := range T {
			id := rng.IntN(R)
			for k := range D {
				x[p*D+k] = tok[id*D+k] + pos[p*D+k]
			}
		}
		for k, ji := range pairs {
			s, err := em.blockNorm(x, ji[0], ji[1], iters, rng)
			if err != nil {
				return nil, err
			}
			out.Blocks[k].Best = max(out.Blocks[k].Best, s)
			if s > out.Best {
				out.Best, out.Row, out.Col = s, ji[0], ji[1]
			}
			if done++; progress != nil {
				progress(done, total)
			}
		}
	}
	return out, nil
}

// embeddedMap is the model on one embedded sequence X (T, D): a run gives its logits
// (T, V) and the VJP u^T J for the weights u (T, V).
type embeddedMap struct {
	m          *Model
	x, u       *tensor.Dense // (T, D), (T, V): inputs written before a run
	logits, dx G.Value       // read by the run
	vm         G.VM
}

// newEmbeddedMap compiles the map of the float64 model m.
func newEmbeddedMap(m *Model) (*embeddedMap, error) {
	T, D, V := m.Cfg.Context, m.Cfg.Width, m.Cfg.Vocab
	g, err := layers.NewGraph(tensor.Float64, 1, T, false)
	if err != nil {
		return nil, err
	}
	em := &embeddedMap{m: m, x: tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(T, D)), u: tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(T, V))}
	xn := G.NodeFromAny(g.G, em.x, G.WithName("x"))
	y := xn
	for _, b := range m.Blocks {
		if y, err = b.Forward(g, y); err != nil {
			return nil, err
		}
	}
	if y, err = m.Final.Forward(g, y); err != nil {
		return nil, err
	}
	if y, err = m.head(g, y); err != nil { // (T, V)
		return nil, err
	}
	un := G.NodeFromAny(g.G, em.u, G.WithName("u"))
	prod, err := G.HadamardProd(y, un)
	if err != nil {
		return nil, err
	}
	loss, err := G.Sum(prod)
	if err != nil {
		return nil, err
	}
	grads, err := G.Grad(loss, xn)
	if err != nil {
		return nil, fmt.Errorf("lower bound: gradients: %w", err)
	}
	G.Read(y, &em.logits)
	G.Read(grads[0], &em.dx)
	em.vm = G.NewTapeMachine(g.G)
	return em, nil
}

// run computes the logits at x and the VJP with weights u, returning copies.
func (em *embeddedMap) run(x, u []float64) (logits, dx []float64, err error) {
	copy(em.x.Data().([]float64), x)
	copy(em.u.Data().([]float64), u)
	em.vm.Reset()
	if err := em.vm.RunAll(); err != nil {
		return nil, nil, err
	}
	return append([]float64(nil), em.logits.Data().([]float64)...), append([]float64(nil), em.dx.Data().([]float64)...), nil
}

// blockNorm estimates the spectral norm of the block J_ji at x by power iteration: J_ji v
// from a central difference of the logits of row j as token i moves along v, J_ji^T w from
// the VJP with weight w on row j, read at token i.
func (em *embeddedMap) blockNorm(x []float64, j, i, iters int, rng *rand.Rand) (float64, error) {
	D, V := em.m.Cfg.Width, em.m.Cfg.Vocab
	scale := 0.0
	for _, v := range x[i*D : (i+1)*D] {
		scale = math.Max(scale, math.Abs(v))
	}
	h := 1e-5 * math.Max(scale, 1)
	zeroU := make([]float64, len(em.u.Data().([]float64)))
	v := make([]float64, D)
	for k := range v {
		v[k] = rng.NormFloat64()
	}
	floats.Scale(1/floats.Norm(v, 2), v)
	sigma := 0.0
	xp, xm := append([]float64(nil), x...), append([]float64(nil), x...)
	for range iters {
		for k := range D {
			xp[i*D+k], xm[i*D+k] = x[i*D+k]+h*v[k], x[i*D+k]-h*v[k]
		}
		zp, _, err := em.run(xp, zeroU)
		if err != nil {
			return 0, err
		}
		zm, _, err := em.run(xm, zeroU)
		if err != nil {
			return 0, err
		}
		w := make([]float64, V)
		for k := range w {
			w[k] = (zp[j*V+k] - zm[j*V+k]) / (2 * h)
		}
		if sigma = floats.Norm(w, 2); sigma == 0 {
			return 0, nil
		}
		u := make([]float64, len(zeroU))
		for k := range w {
			u[j*V+k] = w[k] / sigma
		}
		_, dx, err := em.run(x, u)
		if err != nil {
			return 0, err
		}
		copy(v, dx[i*D:(i+1)*D])
		if floats.Norm(v, 2) == 0 {
			return sigma, nil
		}
		floats.Scale(1/floats.Norm(v, 2), v)
	}
	return sigma, nil
}
