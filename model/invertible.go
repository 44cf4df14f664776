package model

import (
	"runtime"

	"lipformer/kernel"
	"lipformer/layers"
)

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
// without them. Each estimate has its own vectors and scratch, so they run on up to
// GOMAXPROCS goroutines, each taking the next one not taken (kernel.ParallelJobs; the
// attention bounds, the largest, first), with the results of running them one after
// another.
func (m *Model) PowerIterate(n int) {
	var jobs []func()
	for _, a := range m.Attentions() {
		if a.Power != nil {
			jobs = append(jobs, func() { a.PowerIterate(n) })
		}
	}
	for _, sn := range m.SpectralNorms() {
		jobs = append(jobs, func() { sn.Iterate(n) })
	}
	kernel.ParallelJobs(len(jobs), min(runtime.GOMAXPROCS(0), len(jobs)), func(_, j int) { jobs[j]() })
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
