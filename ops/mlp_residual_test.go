package ops

import (
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
	"lipformer/kernel"
)

// mlpResInputs are random inputs of MLPResidual (x, w1, b1, w2, b2) for n rows of width d
// and hidden width hid, as float64 tensors.
func mlpResInputs(seed uint64, n, d, hid int) []*tensor.Dense {
	return []*tensor.Dense{
		gradcheck.Rand(seed, 1, n, d), gradcheck.Rand(seed+1, 0.4, d, hid), gradcheck.Rand(seed+2, 0.3, hid),
		gradcheck.Rand(seed+3, 0.4, hid, d), gradcheck.Rand(seed+4, 0.3, d),
	}
}

// TestMLPResidualForward: y = x + act(x w1 + b1) w2 + b2 against a plain-Go triple loop,
// for ELU and MaxMin.
func TestMLPResidualForward(t *testing.T) {
	const n, d, hid = 5, 4, 6
	for _, act := range []Activation{ActELU, ActMaxMin} {
		in := mlpResInputs(1, n, d, hid)
		g := G.NewGraph()
		nodes := make([]*G.Node, len(in))
		for i, v := range in {
			nodes[i] = G.NodeFromAny(g, v)
		}
		y, err := MLPResidual(nodes[0], nodes[1], nodes[2], nodes[3], nodes[4], act)
		if err != nil {
			t.Fatal(err)
		}
		runGraph(t, g)
		x, w1, b1, w2, b2 := in[0].Data().([]float64), in[1].Data().([]float64), in[2].Data().([]float64), in[3].Data().([]float64), in[4].Data().([]float64)
		assertFloats(t, act.String()+" y", y.Value().Data().([]float64), mlpResRef(act, x, w1, b1, w2, b2, n, d, hid), 1e-13)
	}
}

// mlpResRef is x + act(x w1 + b1) w2 + b2 for x (n, d), w1 (d, hid) and w2 (hid, d), in
// plain Go.
func mlpResRef(act Activation, x, w1, b1, w2, b2 []float64, n, d, hid int) []float64 {
	y := make([]float64, n*d)
	for r := range n {
		a := make([]float64, hid)
		for k := range hid {
			h := b1[k]
			for l := range d {
				h += x[r*d+l] * w1[l*hid+k]
			}
			a[k] = h
			if act == ActELU && h < 0 {
				a[k] = math.Expm1(h)
			}
		}
		if act == ActMaxMin {
			for k := 0; k+1 < hid; k += 2 {
				a[k], a[k+1] = math.Max(a[k], a[k+1]), math.Min(a[k], a[k+1])
			}
		}
		for j := range d {
			v := x[r*d+j] + b2[j]
			for k := range hid {
				v += a[k] * w2[k*d+j]
			}
			y[r*d+j] = v
		}
	}
	return y
}

// assertFloats fails unless got and want agree elementwise to tol.
func assertFloats(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > tol {
			t.Errorf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

// TestMLPResidualGradient: the gradients of all five inputs against central differences,
// for ELU and MaxMin (whose pairs are not near ties at these inputs).
func TestMLPResidualGradient(t *testing.T) {
	for _, act := range []Activation{ActELU, ActMaxMin} {
		in := mlpResInputs(10, 7, 5, 6)
		names := []string{"x", "w1", "b1", "w2", "b2"}
		inputs := make([]gradcheck.Input, len(in))
		for i, v := range in {
			inputs[i] = gradcheck.Input{Name: names[i], Value: v}
		}
		res, err := gradcheck.Check(func(g *G.ExprGraph, n []*G.Node) (*G.Node, error) {
			return MLPResidual(n[0], n[1], n[2], n[3], n[4], act)
		}, inputs, 1, 1e-6)
		assertGrad(t, "mlp residual, "+act.String(), res, err)
	}
}

// TestMLPResidualMatchesOps: the fused op gives the value and the five gradients of
// Add(x, Linear(act(Linear(x, b1, w1)), b2, w2)) bit for bit, for ELU and MaxMin, in float32 and float64, on
// rows enough for the products and elementwise kernels to split across goroutines, and
// again in a second run after x changed in place (the backward reads its own run's
// forward).
func TestMLPResidualMatchesOps(t *testing.T) {
	const n, d, hid = 700, 48, 40 // n d hid above kernel.Gemm's threshold: the products are split
	assertGemmSplits(t, n, d, hid)
	for _, act := range []Activation{ActELU, ActMaxMin} {
		assertFusedMatchesOps(t, func(dt tensor.Dtype, fused bool) (*mlpResGraph, error) {
			return newMLPResGraph(dt, n, d, hid, fused, act)
		}, []string{"y", "dx", "dw1", "db1", "dw2", "db2"})
	}
}

// assertGemmSplits fails unless kernel.Gemm splits a sub-block's products of n rows,
// width d and hidden width hid into bands, when there is more than one core to split them
// over: what the fused ops' bands must reproduce.
func assertGemmSplits(t *testing.T, n, d, hid int) {
	t.Helper()
	if runtime.GOMAXPROCS(0) > 1 && kernel.GemmBand[float32](n, d, hid) == n {
		t.Fatalf("a (%d, %d) x (%d, %d) product is not split: the test would not see the bands", n, d, d, hid)
	}
}

// assertFusedMatchesOps builds the fused and the separate ops' graphs in float64 and
// float32 and fails unless their runs match bit for bit (assertRunsMatch).
func assertFusedMatchesOps(t *testing.T, build func(dt tensor.Dtype, fused bool) (*mlpResGraph, error), names []string) {
	t.Helper()
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		fused, err := build(dt, true)
		if err != nil {
			t.Fatal(err)
		}
		ops, err := build(dt, false)
		if err != nil {
			t.Fatal(err)
		}
		assertRunsMatch(t, dt, fused, ops, names)
	}
}

// assertRunsMatch runs fused and ops twice, x perturbed alike in place before the second
// run, and fails unless their results (named by names) are equal bit for bit.
func assertRunsMatch(t *testing.T, dt tensor.Dtype, fused, ops *mlpResGraph, names []string) {
	t.Helper()
	for run := range 2 {
		if run == 1 {
			fused.perturb(rand.New(rand.NewPCG(7, 8)))
			ops.perturb(rand.New(rand.NewPCG(7, 8)))
		}
		for _, m := range []*mlpResGraph{fused, ops} {
			if err := m.vm.RunAll(); err != nil {
				t.Fatal(err)
			}
		}
		got, want := fused.results(t), ops.results(t)
		for i := range want {
			for j := range want[i] {
				if math.Float64bits(got[i][j]) != math.Float64bits(want[i][j]) {
					t.Fatalf("%v, run %d: %s[%d] is %v fused, %v by the separate ops", dt, run, names[i], j, got[i][j], want[i][j])
				}
			}
		}
		fused.vm.Reset()
		ops.vm.Reset()
	}
}

// mlpResGraph is a cross-entropy loss of the sub-block's output (as logits), built fused
// or from the separate ops, with its machine.
type mlpResGraph struct {
	in    []*G.Node // x, w1, b1, w2, b2
	vals  []G.Value // read by the runs: y and the gradients of the inputs
	vm    G.VM
	xData *tensor.Dense
}

// newMLPResGraph builds the graph on mlpResInputs(20, ...) converted to dt, with act.
func newMLPResGraph(dt tensor.Dtype, n, d, hid int, fused bool, act Activation) (*mlpResGraph, error) {
	g := G.NewGraph()
	m := &mlpResGraph{}
	for i, v := range mlpResInputs(20, n, d, hid) {
		c := asDtype(v, dt)
		if i == 0 {
			m.xData = c
		}
		m.in = append(m.in, G.NodeFromAny(g, c))
	}
	x, w1, b1, w2, b2 := m.in[0], m.in[1], m.in[2], m.in[3], m.in[4]
	var y *G.Node
	var err error
	if fused {
		y, err = MLPResidual(x, w1, b1, w2, b2, act)
	} else {
		var h *G.Node
		if h, err = Linear(x, b1, w1); err == nil {
			if h, err = act.Apply(h); err == nil {
				if h, err = Linear(h, b2, w2); err == nil {
					y, err = Add(x, h)
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

// perturb adds small noise to x in place.
func (m *mlpResGraph) perturb(rng *rand.Rand) {
	switch v := m.xData.Data().(type) {
	case []float32:
		for i := range v {
			v[i] += float32(0.1 * rng.NormFloat64())
		}
	case []float64:
		for i := range v {
			v[i] += 0.1 * rng.NormFloat64()
		}
	}
}

// results are y and the gradients of x, w1, b1, w2 and b2, as float64.
func (m *mlpResGraph) results(t *testing.T) [][]float64 {
	t.Helper()
	out := make([][]float64, len(m.vals))
	for i, v := range m.vals {
		switch d := v.Data().(type) {
		case []float32:
			for _, f := range d {
				out[i] = append(out[i], float64(f))
			}
		case []float64:
			out[i] = append([]float64(nil), d...)
		}
	}
	return out
}

// TestMLPResidualPartsNeedTheirRun: the backward fails without a forward of its run to
// read, and a reader without a backward, instead of using stale values.
func TestMLPResidualPartsNeedTheirRun(t *testing.T) {
	in := mlpResInputs(40, 3, 2, 4)
	vals := make([]G.Value, 0, 7)
	for _, v := range in {
		vals = append(vals, v)
	}
	vals = append(vals, in[0], in[0]) // y and dy, (N, D)
	st := &mlpResState{}
	bwd := &mlpResOp{baseOp: baseOp{name: "MLPResidualGrad"}, part: mlpResBackward, st: st}
	if _, err := bwd.Do(vals...); err == nil || !strings.Contains(err.Error(), "forward") {
		t.Errorf("backward without a forward: %v, want an error", err)
	}
	fwd := &mlpResOp{baseOp: baseOp{name: "MLPResidual"}, part: mlpResForward, st: st}
	if _, err := fwd.Do(vals[:5]...); err != nil {
		t.Fatal(err)
	}
	rd := &mlpResOp{baseOp: baseOp{name: "MLPResidualGrad{part=0}"}, part: 0, st: st}
	if _, err := rd.Do(in[1], in[0]); err == nil || !strings.Contains(err.Error(), "backward") {
		t.Errorf("reader without a backward: %v, want an error", err)
	}
	if _, err := bwd.Do(vals...); err != nil {
		t.Fatal(err)
	}
	if _, err := rd.Do(in[1], in[0]); err != nil {
		t.Errorf("reader after the backward: %v", err)
	}
	if _, err := bwd.Do(vals...); err == nil {
		t.Error("a second backward on the same forward succeeded, want an error")
	}
}

// TestMLPResidualRefusesBadShapes: mismatched shapes and dtypes, and MaxMin on an odd
// hidden width, are refused with the shapes named, before Gorgonia sees them.
func TestMLPResidualRefusesBadShapes(t *testing.T) {
	g := G.NewGraph()
	node := func(dt tensor.Dtype, shape ...int) *G.Node {
		return G.NewTensor(g, dt, len(shape), G.WithShape(shape...))
	}
	x, w1, b1, w2, b2 := node(tensor.Float64, 4, 3), node(tensor.Float64, 3, 5), node(tensor.Float64, 5), node(tensor.Float64, 5, 3), node(tensor.Float64, 3)
	if _, err := MLPResidual(x, w1, b1, w2, b2, ActELU); err != nil {
		t.Fatalf("good shapes: %v", err)
	}
	if _, err := MLPResidual(x, w1, b1, w2, b2, ActMaxMin); err == nil || !strings.Contains(err.Error(), "hidden width 5 is odd") {
		t.Errorf("MaxMin on 5 hidden units: %v, want an error naming the odd width", err)
	}
	for name, in := range map[string][5]*G.Node{
		"w1 rows":  {x, node(tensor.Float64, 4, 5), b1, w2, b2},
		"b1 width": {x, w1, node(tensor.Float64, 4), w2, b2},
		"w2 cols":  {x, w1, b1, node(tensor.Float64, 5, 4), b2},
		"b2 width": {x, w1, b1, w2, node(tensor.Float64, 5)},
		"dtype":    {x, w1, b1, w2, node(tensor.Float32, 3)},
	} {
		if _, err := MLPResidual(in[0], in[1], in[2], in[3], in[4], ActELU); err == nil || !strings.Contains(err.Error(), "mlp residual") {
			t.Errorf("%s: %v, want an error naming the op", name, err)
		}
	}
}

// testLoss is the cross-entropy of the rows of y (N, D) as logits, row i's target i*7 mod D:
// a loss whose gradient reaches every output.
func testLoss(g *G.ExprGraph, y *G.Node) (*G.Node, error) {
	n, d := y.Shape()[0], y.Shape()[1]
	targets := make([]int, n)
	for i := range targets {
		targets[i] = (7 * i) % d
	}
	return CrossEntropy(y, G.NodeFromAny(g, tensor.New(tensor.WithShape(n), tensor.WithBacking(targets))))
}
