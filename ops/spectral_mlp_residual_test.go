package ops

import (
	"fmt"
	"math"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
)

// specMLPInputs are random inputs of SpectralMLPResidual in the order of its forward (x,
// W1, u1, v1, b1, W2, u2, v2, b2, s) for n rows of width d and hidden width hid, as
// float64 tensors: each u is W v / ||W v|| for a random unit v, so that sigma = u^T W v is
// positive.
func specMLPInputs(seed uint64, n, d, hid int) []*tensor.Dense {
	w1, w2 := gradcheck.Rand(seed+1, 0.4, d, hid), gradcheck.Rand(seed+5, 0.4, hid, d)
	u1, v1 := powerVectors(seed+2, w1)
	u2, v2 := powerVectors(seed+6, w2)
	return []*tensor.Dense{
		gradcheck.Rand(seed, 1, n, d), w1, u1, v1, gradcheck.Rand(seed+3, 0.3, hid),
		w2, u2, v2, gradcheck.Rand(seed+7, 0.3, d), tensor.New(tensor.WithShape(1), tensor.WithBacking([]float64{0.4})),
	}
}

// powerVectors are a random unit v (w's columns) and u = w v / ||w v|| (its rows).
func powerVectors(seed uint64, w *tensor.Dense) (u, v *tensor.Dense) {
	rows, cols := w.Shape()[0], w.Shape()[1]
	vd := gradcheck.Rand(seed, 1, cols).Data().([]float64)
	normalise(vd)
	wd, ud := w.Data().([]float64), make([]float64, rows)
	for i := range ud {
		for j, vj := range vd {
			ud[i] += wd[i*cols+j] * vj
		}
	}
	normalise(ud)
	return tensor.New(tensor.WithShape(rows), tensor.WithBacking(ud)), tensor.New(tensor.WithShape(cols), tensor.WithBacking(vd))
}

// normalise scales x to unit 2-norm.
func normalise(x []float64) {
	var s float64
	for _, v := range x {
		s += v * v
	}
	for i := range x {
		x[i] /= math.Sqrt(s)
	}
}

// namedNodes adds vals to g as named input nodes. Gorgonia merges constants of the same
// shape whatever their values (NodeFromAny; docs/gorgonia.md), which would give u1 and v2,
// both (D), one node.
func namedNodes(g *G.ExprGraph, vals []*tensor.Dense) []*G.Node {
	nodes := make([]*G.Node, len(vals))
	for i, v := range vals {
		nodes[i] = G.NodeFromAny(g, v, G.WithName(fmt.Sprintf("in%d", i)))
	}
	return nodes
}

// specMLP applies SpectralMLPResidual with ELU to the nodes in its forward's order, with
// coefficients c1 and c2.
func specMLP(n []*G.Node, c1, c2 float64) (*G.Node, error) {
	return specMLPAct(n, c1, c2, ActELU)
}

// specMLPAct is specMLP with the activation act.
func specMLPAct(n []*G.Node, c1, c2 float64, act Activation) (*G.Node, error) {
	return SpectralMLPResidual(n[smX], SpectralWeight{n[smW1], n[smU1], n[smV1], c1}, n[smB1], SpectralWeight{n[smW2], n[smU2], n[smV2], c2}, n[smB2], n[smS], act)
}

// TestSpectralMLPResidualForward: y = x + ELU(x w1 + b1) w2 + b2 with w1 = c1 e^s W1 /
// sigma1 and w2 = c2 e^-s W2 / sigma2, against plain Go.
func TestSpectralMLPResidualForward(t *testing.T) {
	const n, d, hid, c1, c2 = 5, 4, 3, 0.7, 0.9
	in := specMLPInputs(1, n, d, hid)
	g := G.NewGraph()
	nodes := namedNodes(g, in)
	if nodes[smU1] == nodes[smV2] {
		t.Fatal("u1 and v2 are one node")
	}
	y, err := specMLP(nodes, c1, c2)
	if err != nil {
		t.Fatal(err)
	}
	runGraph(t, g)
	f := func(i int) []float64 { return in[i].Data().([]float64) }
	s := f(smS)[0]
	weight := func(w, u, v []float64, rows, cols int, c, gain float64) []float64 {
		var sigma float64
		for i := range rows {
			for j := range cols {
				sigma += u[i] * w[i*cols+j] * v[j]
			}
		}
		out := make([]float64, len(w))
		for i, x := range w {
			out[i] = c * gain * x / sigma
		}
		return out
	}
	w1 := weight(f(smW1), f(smU1), f(smV1), d, hid, c1, math.Exp(s))
	w2 := weight(f(smW2), f(smU2), f(smV2), hid, d, c2, math.Exp(-s))
	assertFloats(t, "y", y.Value().Data().([]float64), mlpResRef(ActELU, f(smX), w1, f(smB1), w2, f(smB2), n, d, hid), 1e-13)
}

// TestSpectralMLPResidualGradient: the gradients of x, W1, b1, W2, b2 and s against central
// differences, with u and v held fixed.
func TestSpectralMLPResidualGradient(t *testing.T) {
	in := specMLPInputs(10, 7, 5, 6)
	names := []string{"x", "W1", "u1", "v1", "b1", "W2", "u2", "v2", "b2", "s"}
	inputs := make([]gradcheck.Input, len(in))
	for i, v := range in {
		inputs[i] = gradcheck.Input{Name: names[i], Value: v, NoGrad: i == smU1 || i == smV1 || i == smU2 || i == smV2}
	}
	res, err := gradcheck.Check(func(g *G.ExprGraph, n []*G.Node) (*G.Node, error) {
		return specMLP(n, 0.8, 0.9)
	}, inputs, 1, 1e-6)
	assertGrad(t, "spectral mlp residual", res, err)
}

// TestSpectralMLPResidualMatchesOps: the fused op gives the value and the six gradients of
// MLPResidual(x, HeadScale(SpectralNormalize(W1, u1, v1, 1), s, 1), b1,
// HeadScale(SpectralNormalize(W2, u2, v2, c), s, -1), b2) bit for bit, for ELU and
// MaxMin, in float32 and float64, on rows enough for the products and elementwise kernels
// to split across goroutines, and again in a second run after x changed in place.
func TestSpectralMLPResidualMatchesOps(t *testing.T) {
	const n, d, hid = 700, 48, 40 // n d hid above kernel.Gemm's threshold: the products are split
	assertGemmSplits(t, n, d, hid)
	for _, act := range []Activation{ActELU, ActMaxMin} {
		assertFusedMatchesOps(t, func(dt tensor.Dtype, fused bool) (*mlpResGraph, error) {
			return newSpecMLPGraph(dt, n, d, hid, fused, act)
		}, []string{"y", "dx", "dW1", "db1", "dW2", "db2", "ds"})
	}
}

// newSpecMLPGraph builds a cross-entropy loss of the sub-block's output, with act, on
// specMLPInputs(20, ...) converted to dt, fused or from the separate ops, reading y and
// the gradients of x, W1, b1, W2, b2 and s.
func newSpecMLPGraph(dt tensor.Dtype, n, d, hid int, fused bool, act Activation) (*mlpResGraph, error) {
	const c = 0.9
	g := G.NewGraph()
	m := &mlpResGraph{}
	var vals []*tensor.Dense
	for _, v := range specMLPInputs(20, n, d, hid) {
		vals = append(vals, asDtype(v, dt))
	}
	m.xData = vals[smX]
	nodes := namedNodes(g, vals)
	var y *G.Node
	var err error
	if fused {
		y, err = specMLPAct(nodes, 1, c, act)
	} else {
		var w1, w2 *G.Node
		if w1, err = SpectralNormalize(nodes[smW1], nodes[smU1], nodes[smV1], 1); err == nil {
			if w2, err = SpectralNormalize(nodes[smW2], nodes[smU2], nodes[smV2], c); err == nil {
				if w1, err = HeadScale(w1, nodes[smS], 1); err == nil {
					if w2, err = HeadScale(w2, nodes[smS], -1); err == nil {
						y, err = MLPResidual(nodes[smX], w1, nodes[smB1], w2, nodes[smB2], act)
					}
				}
			}
		}
	}
	if err != nil {
		return nil, err
	}
	loss, err := testLoss(g, y)
	if err != nil {
		return nil, err
	}
	m.in = []*G.Node{nodes[smX], nodes[smW1], nodes[smB1], nodes[smW2], nodes[smB2], nodes[smS]}
	grads, err := G.Grad(loss, m.in...)
	if err != nil {
		return nil, err
	}
	m.vals = make([]G.Value, 1+len(grads))
	for i, n := range append(G.Nodes{y}, grads...) {
		G.Read(n, &m.vals[i])
	}
	m.vm = G.NewTapeMachine(g)
	return m, nil
}

// TestSpectralMLPResidualPartsNeedTheirRun: the backward fails without a forward of its
// run to read, and a reader without a backward, instead of using stale values.
func TestSpectralMLPResidualPartsNeedTheirRun(t *testing.T) {
	in := specMLPInputs(40, 3, 2, 4)
	vals := make([]G.Value, 0, smInputs+2)
	for _, v := range in {
		vals = append(vals, v)
	}
	vals = append(vals, in[smX], in[smX]) // y and dy, (N, D)
	st := &specMLPState{}
	c := [2]float64{1, 0.9}
	bwd := &specMLPOp{baseOp: baseOp{name: "SpectralMLPResidualGrad"}, part: mlpResBackward, c: c, st: st}
	if _, err := bwd.Do(vals...); err == nil || !strings.Contains(err.Error(), "forward") {
		t.Errorf("backward without a forward: %v, want an error", err)
	}
	fwd := &specMLPOp{baseOp: baseOp{name: "SpectralMLPResidual"}, part: mlpResForward, c: c, st: st}
	if _, err := fwd.Do(vals[:smInputs]...); err != nil {
		t.Fatal(err)
	}
	rd := &specMLPOp{baseOp: baseOp{name: "SpectralMLPResidualGrad{part=4}"}, part: 4, c: c, st: st}
	if _, err := rd.Do(in[smS], in[smX]); err == nil || !strings.Contains(err.Error(), "backward") {
		t.Errorf("reader without a backward: %v, want an error", err)
	}
	if _, err := bwd.Do(vals...); err != nil {
		t.Fatal(err)
	}
	if _, err := rd.Do(in[smS], in[smX]); err != nil {
		t.Errorf("reader after the backward: %v", err)
	}
}

// TestSpectralMLPResidualRefuses: mismatched shapes, dtypes, vectors and coefficients are
// refused with an error naming the op, and a non-positive sigma at run time.
func TestSpectralMLPResidualRefuses(t *testing.T) {
	g := G.NewGraph()
	node := func(dt tensor.Dtype, shape ...int) *G.Node {
		return G.NewTensor(g, dt, len(shape), G.WithShape(shape...))
	}
	f := tensor.Float64
	good := []*G.Node{node(f, 4, 3), node(f, 3, 5), node(f, 3), node(f, 5), node(f, 5), node(f, 5, 3), node(f, 5), node(f, 3), node(f, 3), node(f, 1)}
	if _, err := specMLP(good, 1, 0.9); err != nil {
		t.Fatalf("good shapes: %v", err)
	}
	with := func(i int, n *G.Node) []*G.Node {
		in := append([]*G.Node(nil), good...)
		in[i] = n
		return in
	}
	for name, in := range map[string][]*G.Node{
		"W1 rows":  with(smW1, node(f, 4, 5)),
		"u1 size":  with(smU1, node(f, 4)),
		"v2 size":  with(smV2, node(f, 5)),
		"b1 width": with(smB1, node(f, 4)),
		"s size":   with(smS, node(f, 2)),
		"dtype":    with(smB2, node(tensor.Float32, 3)),
	} {
		if _, err := specMLP(in, 1, 0.9); err == nil || !strings.Contains(err.Error(), "spectral mlp residual") {
			t.Errorf("%s: %v, want an error naming the op", name, err)
		}
	}
	if _, err := specMLP(good, 1, 0); err == nil || !strings.Contains(err.Error(), "coefficient") {
		t.Errorf("coefficient 0: %v, want an error", err)
	}
	in := specMLPInputs(50, 3, 2, 4)
	neg := in[smU2].Data().([]float64)
	for i := range neg {
		neg[i] = -neg[i]
	}
	vals := make([]G.Value, len(in))
	for i, v := range in {
		vals[i] = v
	}
	fwd := &specMLPOp{baseOp: baseOp{name: "SpectralMLPResidual"}, part: mlpResForward, c: [2]float64{1, 0.9}, st: &specMLPState{}}
	if _, err := fwd.Do(vals...); err == nil || !strings.Contains(err.Error(), "spectral norm estimate") {
		t.Errorf("negative sigma: %v, want an error", err)
	}
}
