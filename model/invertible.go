package model

import "lipformer/layers"

// SpectralNorms returns every spectral normalisation of the model's invertible blocks, in
// block order (none for other architectures).
func (m *Model) SpectralNorms() []*layers.SpectralNorm {
	var sn []*layers.SpectralNorm
	for _, b := range m.Invertible() {
		sn = append(sn, b.SpectralNorms()...)
	}
	if m.HeadSN != nil {
		sn = append(sn, m.HeadSN)
	}
	return sn
}

// Invertible returns the blocks of an invertible architecture, in order, or nil for the
// others.
func (m *Model) Invertible() []*layers.InvertibleBlock {
	var inv []*layers.InvertibleBlock
	for _, b := range m.Blocks {
		if ib, ok := b.(*layers.InvertibleBlock); ok {
			inv = append(inv, ib)
		}
	}
	return inv
}

// Attentions returns every attention layer, in block order.
func (m *Model) Attentions() []*layers.Attention {
	var as []*layers.Attention
	for _, b := range m.Blocks {
		as = append(as, b.Attention())
	}
	return as
}

// PowerIterate runs n steps of power iteration on every spectrally normalised weight and
// every token-norm attention bound, updating their persistent vectors in place: once
// before each training step, more before an inversion. It does nothing for architectures
// without them.
func (m *Model) PowerIterate(n int) {
	for _, sn := range m.SpectralNorms() {
		sn.Iterate(n)
	}
	for _, a := range m.Attentions() {
		a.PowerIterate(n)
	}
}

// Buffers returns the tensors that checkpoints save besides the parameters: the power
// iteration vectors u and v of every spectral normalisation, then those of every
// token-norm attention bound, in a fixed order.
func (m *Model) Buffers() []*layers.Buffer {
	var bs []*layers.Buffer
	for _, sn := range m.SpectralNorms() {
		bs = append(bs, sn.Buffers()...)
	}
	for _, a := range m.Attentions() {
		if a.Power != nil {
			bs = append(bs, a.Power.Buffers()...)
		}
	}
	return bs
}
