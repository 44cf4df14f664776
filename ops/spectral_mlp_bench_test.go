package ops

import (
	"fmt"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// BenchmarkSpectralMLPSubBlocks times one invertible block's MLP sub-blocks at P2's shape
// (768 rows of width 128, the MLP width 512 shared among k sub-blocks: the recipe's eight
// of width 64, four of width 128, one of width 512, the same FLOPs), forward and backward
// through a chain of k SpectralMLPResidual ops in float32, and reports the process's CPU
// time per run beside the wall time (docs/performance.md, "What the invertible recipe's
// eight MLP sub-blocks cost"):
//
//	go test -run '^$' -bench SpectralMLPSubBlocks -count 6 ./ops
func BenchmarkSpectralMLPSubBlocks(b *testing.B) {
	const n, d, width = 768, 128, 512
	for _, k := range []int{8, 4, 1} {
		b.Run(fmt.Sprintf("%dx%d", k, width/k), func(b *testing.B) {
			vm, err := subBlockChain(k, n, d, width/k)
			if err != nil {
				b.Fatal(err)
			}
			cpu0 := cpuSeconds(b)
			for b.Loop() {
				if err := vm.RunAll(); err != nil {
					b.Fatal(err)
				}
				vm.Reset()
			}
			b.ReportMetric((cpuSeconds(b)-cpu0)/float64(b.N)*1e3, "cpu-ms/op")
		})
	}
}

// subBlockChain is a machine for the gradients of a cross-entropy loss of k
// SpectralMLPResidual sub-blocks in a chain, each on its own specMLPInputs, in float32.
func subBlockChain(k, n, d, hid int) (G.VM, error) {
	g := G.NewGraph()
	var y, x *G.Node
	var params G.Nodes
	for j := range k {
		var nodes []*G.Node
		for i, v := range specMLPInputs(uint64(20+10*j), n, d, hid) { // named apart, as namedNodes says why
			nodes = append(nodes, G.NodeFromAny(g, asDtype(v, tensor.Float32), G.WithName(fmt.Sprintf("sub%d.in%d", j, i))))
		}
		if y == nil {
			x, y = nodes[smX], nodes[smX]
		}
		var err error
		if y, err = SpectralMLPResidual(y, SpectralWeight{nodes[smW1], nodes[smU1], nodes[smV1], 1}, nodes[smB1],
			SpectralWeight{nodes[smW2], nodes[smU2], nodes[smV2], 0.9}, nodes[smB2], nodes[smS], ActELU); err != nil {
			return nil, err
		}
		for _, i := range smParams {
			params = append(params, nodes[i])
		}
	}
	loss, err := testLoss(g, y)
	if err != nil {
		return nil, err
	}
	if _, err := G.Grad(loss, append(G.Nodes{x}, params...)...); err != nil {
		return nil, err
	}
	return G.NewTapeMachine(g), nil
}
