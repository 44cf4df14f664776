package model

import (
	"fmt"
	"lipformer/layers"
)

// SetAttentionOff removes the attention sub-block of the listed blocks (indices 0..Layers-1)
// from the programs compiled afterwards: each such block's input passes unchanged to its MLP
// sub-block (layers.Block.AttnOff, layers.InvertibleBlock.AttnOff). Programs compiled
// before keep their graphs. It is an ablation for evaluation programs: NewBatchDecoder
// refuses a model with attention off, and certificates and inversions ignore it. restore
// puts back the state every block had before the call. A negative, out of range or
// repeated index is an error naming it, and then nothing changes.
func (m *Model) SetAttentionOff(blocks []int) (restore func(), err error) {
	off := m.attnOff()
	seen := make([]bool, len(off))
	for _, l := range blocks {
		if l < 0 || l >= len(off) {
			return nil, fmt.Errorf("model: attention of layer %d, want a layer 0..%d", l, len(off)-1)
		}
		if seen[l] {
			return nil, fmt.Errorf("model: attention of layer %d listed twice", l)
		}
		seen[l] = true
	}
	was := make([]bool, len(off))
	for i, p := range off {
		was[i] = *p
	}
	for _, l := range blocks {
		*off[l] = true
	}
	return func() {
		for i, p := range off {
			*p = was[i]
		}
	}, nil
}

// AttentionOff returns the indices of the blocks whose attention sub-block is off, in
// increasing order (none for an intact model).
func (m *Model) AttentionOff() []int {
	var l []int
	for i, p := range m.attnOff() {
		if *p {
			l = append(l, i)
		}
	}
	return l
}

// attnOff returns each block's AttnOff flag, in block order.
func (m *Model) attnOff() []*bool {
	var off []*bool
	for _, b := range m.Blocks {
		switch b := b.(type) {
		case *layers.Block:
			off = append(off, &b.AttnOff)
		case *layers.InvertibleBlock:
			off = append(off, &b.AttnOff)
		}
	}
	return off
}
