package train

import "lipformer/dist"

// allReduce replaces the gradients and loss of this replica by their mean over the
// replicas of s.Comm, the gradient and loss of the mean loss over the job's batch (each
// replica's loss is the mean over its rows, and all have as many). It sums all gradients
// in one call, through a flat buffer, and the loss in float64.
func (s *Stepper[T]) allReduce(loss float64) (float64, error) {
	if s.Comm == nil || s.Comm.Size() == 1 {
		return loss, nil
	}
	if s.flat == nil {
		n := 0
		for _, g := range s.grads {
			n += len(g)
		}
		s.flat = make([]T, n)
	}
	at := 0
	for _, g := range s.grads {
		at += copy(s.flat[at:], g)
	}
	if err := dist.Sum(s.Comm, s.flat); err != nil {
		return 0, err
	}
	n := float64(s.Comm.Size())
	at = 0
	for _, g := range s.grads {
		for i := range g {
			g[i] = s.flat[at+i] / T(n)
		}
		at += len(g)
	}
	l := []float64{loss}
	if err := s.Comm.SumFloat64(l); err != nil {
		return 0, err
	}
	return l[0] / n, nil
}
