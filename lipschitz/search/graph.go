package search

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/tensor"

	"lipformer/layers"
)

// chunkBudget is the number of float64 input values (copies x N x D) that
// DefaultChunk allows one Jacobian chunk: about 8 MB of input, and a small
// multiple of it for the graph's intermediates.
const chunkBudget = 1 << 20

// DefaultChunk is the number of Jacobian rows a GraphMap builds per run for
// sequences of n tokens of width dim: all n*dim when the stacked batch fits
// chunkBudget, else as many as fit (at least 1).
func DefaultChunk(n, dim int) int {
	k := n * dim
	return max(1, min(k, chunkBudget/k))
}

// GraphMap is an attention layer of package layers on sequences of N tokens,
// differentiated through its Gorgonia graph in float64: any kind, width,
// number of heads, causal or not, contractive or not.
//
// Its Jacobian is exact: a batch of C copies of the sequence whose copy k has
// output weight e_{r+k} (the unit vector of output r+k) gives rows r..r+C-1
// of J in one backward pass; the rows come in chunks of C so that memory
// stays bounded. A VJP is one backward pass. GraphMap is not safe for
// concurrent use; Close releases it.
type GraphMap struct {
	attn     *layers.Attention
	n, dim   int
	chunk    int
	grads    map[int]*stack // programs with a gradient, by batch size
	forwards map[int]*stack // forward-only programs, by batch size
}

// NewGraphMap returns the map of layer a on sequences of n tokens, building
// chunk Jacobian rows per run (chunk <= 0 chooses DefaultChunk). The layer's
// weights must be float64. The map works on a copy of them, taken now, so
// that maps of one layer can run concurrently (Gorgonia writes to the
// tensors of a graph it compiles).
func NewGraphMap(a *layers.Attention, n, chunk int) (*GraphMap, error) {
	if a == nil || a.WQ == nil || a.WV == nil || a.WO == nil {
		return nil, errors.New("search: nil attention layer or weights")
	}
	if n < 1 {
		return nil, fmt.Errorf("search: sequence length n = %d, want >= 1", n)
	}
	for _, p := range a.Params() {
		if p.Value.Dtype() != tensor.Float64 {
			return nil, fmt.Errorf("search: %s is %v, want float64", p.Name, p.Value.Dtype())
		}
	}
	dim := a.WQ.Value.Shape()[0]
	own := *a
	for _, p := range []**layers.Param{&own.WQ, &own.WK, &own.WV, &own.WO, &own.LogTemp, &own.PosBias} {
		if *p != nil {
			*p = &layers.Param{Name: (*p).Name, Value: (*p).Value.Clone().(*tensor.Dense), Decay: (*p).Decay}
		}
	}
	if chunk <= 0 {
		chunk = DefaultChunk(n, dim)
	}
	chunk = min(chunk, n*dim)
	return &GraphMap{attn: &own, n: n, dim: dim, chunk: chunk, grads: map[int]*stack{}, forwards: map[int]*stack{}}, nil
}

// Len is N*D.
func (m *GraphMap) Len() int { return m.n * m.dim }

// Chunk is the number of Jacobian rows built per run.
func (m *GraphMap) Chunk() int { return m.chunk }

// Close releases the compiled graphs.
func (m *GraphMap) Close() {
	for _, s := range m.grads {
		s.close()
	}
	for _, s := range m.forwards {
		s.close()
	}
	clear(m.grads)
	clear(m.forwards)
}

// program returns the compiled graph for a batch of the given size.
func (m *GraphMap) program(batch int, grad bool) (*stack, error) {
	cache := m.forwards
	if grad {
		cache = m.grads
	}
	if s, ok := cache[batch]; ok {
		return s, nil
	}
	s, err := newStack(m.attn, m.n, m.dim, batch, grad)
	if err != nil {
		return nil, err
	}
	cache[batch] = s
	return s, nil
}

// Forward writes F(xs[b]) into dst[b], all in one run.
func (m *GraphMap) Forward(xs, dst [][]float64) error {
	k := m.Len()
	if err := checkBatch(xs, nil, dst, k, false); err != nil {
		return err
	}
	s, err := m.program(len(xs), false)
	if err != nil {
		return err
	}
	for b, x := range xs {
		copy(s.xs()[b*k:], x)
	}
	if err := s.run(); err != nil {
		return err
	}
	for b := range dst {
		copy(dst[b], s.outputs()[b*k:(b+1)*k])
	}
	return nil
}

// VJP writes us[b]^T J(xs[b]) into dst[b], all in one backward pass.
func (m *GraphMap) VJP(xs, us, dst [][]float64) error {
	k := m.Len()
	if err := checkBatch(xs, us, dst, k, true); err != nil {
		return err
	}
	s, err := m.program(len(xs), true)
	if err != nil {
		return err
	}
	for b := range xs {
		copy(s.xs()[b*k:], xs[b])
		copy(s.ws()[b*k:], us[b])
	}
	if err := s.run(); err != nil {
		return err
	}
	for b := range dst {
		copy(dst[b], s.grads()[b*k:(b+1)*k])
	}
	return nil
}

// Jacobian writes the exact J(x) (N*D, N*D) into dst, Chunk rows per run.
func (m *GraphMap) Jacobian(x []float64, dst *mat.Dense) error {
	k := m.Len()
	if err := checkVec("x", x, k); err != nil {
		return err
	}
	if err := checkJacobianDst(dst, k); err != nil {
		return err
	}
	s, err := m.program(m.chunk, true)
	if err != nil {
		return err
	}
	xs, ws := s.xs(), s.ws()
	for c := range m.chunk {
		copy(xs[c*k:(c+1)*k], x)
	}
	for first := 0; first < k; first += m.chunk {
		rows := min(m.chunk, k-first)
		clear(ws)
		for c := range rows {
			ws[c*k+first+c] = 1
		}
		if err := s.run(); err != nil {
			return err
		}
		g := s.grads()
		for c := range rows {
			copy(dst.RawRowView(first+c), g[c*k:(c+1)*k])
		}
	}
	return nil
}
