package search

import "fmt"

// Norm selects the matrix norm of the Jacobian whose maximum the search
// seeks: the inf-norm (largest absolute row sum, local Lip_inf) or the
// 2-norm (largest singular value, local Lip_2).
type Norm int

const (
	// NormInf is ||J||_inf.
	NormInf Norm = iota
	// Norm2 is ||J||_2.
	Norm2
)

// ParseNorm reads "inf" or "2".
func ParseNorm(s string) (Norm, error) {
	switch s {
	case "inf":
		return NormInf, nil
	case "2":
		return Norm2, nil
	}
	return 0, fmt.Errorf("norm %q: want inf or 2", s)
}

// String is "inf" or "2".
func (p Norm) String() string {
	switch p {
	case NormInf:
		return "inf"
	case Norm2:
		return "2"
	}
	return fmt.Sprintf("Norm(%d)", int(p))
}
