package model

import "lipformer/layers"

// SpectralNorms returns every spectral normalisation of the model's invertible blocks, in
// block order (none for other architectures).
func (m *Model) SpectralNorms() []*layers.SpectralNorm {
	var sn []*layers.SpectralNorm
	for _, b := range m.Inv {
		sn = append(sn, b.SpectralNorms()...)
	}
	return sn
}

// PowerIterate runs n steps of power iteration on every spectrally normalised weight,
// updating its persistent vectors in place: once before each training step, more before an
// inversion. It does nothing for architectures without spectral normalisation.
func (m *Model) PowerIterate(n int) {
	for _, sn := range m.SpectralNorms() {
		sn.Iterate(n)
	}
}

// Buffers returns the tensors that checkpoints save besides the parameters: the power
// iteration vectors u and v of every spectral normalisation, in a fixed order.
func (m *Model) Buffers() []*layers.Buffer {
	var bs []*layers.Buffer
	for _, sn := range m.SpectralNorms() {
		bs = append(bs, sn.Buffers()...)
	}
	return bs
}
