package expressive

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// gdMachine is the compiled loss of one module for targets of length L with at most K
// entries per row: the graph, its gradient with respect to X from one G.Grad, and a tape
// machine, built once and run for every step of every target of that shape. The input X
// is bound to a tensor whose data the optimiser updates in place.
type gdMachine struct {
	lg *lossGraph
	x  *tensor.Dense // (L, n): the input, bound to the X node
	vm G.VM
	// Values read at run time (G.Read copies them, so later instructions cannot
	// overwrite them in reused registers). They are separate allocations: a G.Read into
	// a field of gdMachine would make a cycle with the tape machine's finalizer, which Go
	// never collects.
	loss, grad, z *G.Value // scalar; (L, n); (L, L)
}

// newGDMachine builds the loss graph of module m at precision eps and its gradient.
func newGDMachine(m *Module, L, K int, eps float64) (*gdMachine, error) {
	g := G.NewGraph()
	gm := &gdMachine{x: tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(L, m.InputWidth())),
		loss: new(G.Value), grad: new(G.Value), z: new(G.Value)}
	xN := G.NodeFromAny(g, gm.x, G.WithName("X")) // (L, n)
	lg, err := newLossGraph(xN, m.WQ, m.WK, K, eps)
	if err != nil {
		return nil, err
	}
	grads, err := G.Grad(lg.Loss, xN)
	if err != nil {
		return nil, fmt.Errorf("expressive: gradient of the gd loss: %w", err)
	}
	gm.lg = lg
	G.Read(lg.Loss, gm.loss)
	G.Read(grads[0], gm.grad)
	G.Read(lg.Z, gm.z)
	gm.vm = G.NewTapeMachine(g)
	return gm, nil
}

// X is the input's data, row-major (L, n): write it before Run; an optimiser may update
// it in place between runs.
func (gm *gdMachine) X() []float64 { return gm.x.Float64s() }

// Run evaluates the loss, its gradient with respect to X (copied into grad, of length
// L*n) and the logits at the current X. The logits share memory with the machine and are
// overwritten by the next Run; z is (L, L).
func (gm *gdMachine) Run(grad []float64) (loss float64, z *mat.Dense, err error) {
	gm.vm.Reset()
	if err := gm.vm.RunAll(); err != nil {
		return 0, nil, fmt.Errorf("expressive: running the gd loss: %w", err)
	}
	lv, ok := *gm.loss, false
	if lv != nil {
		loss, ok = lv.Data().(float64)
	}
	gv, okG := (*gm.grad).(*tensor.Dense)
	zv, okZ := (*gm.z).(*tensor.Dense)
	if !ok || !okG || !okZ {
		return 0, nil, fmt.Errorf("expressive: gd loss machine returned %T, %T, %T", *gm.loss, *gm.grad, *gm.z)
	}
	if len(grad) != gv.DataSize() {
		return 0, nil, fmt.Errorf("expressive: gradient buffer of %d values for an input of %d", len(grad), gv.DataSize())
	}
	copy(grad, gv.Float64s())
	return loss, mat.NewDense(gm.lg.L, gm.lg.L, zv.Float64s()), nil
}
