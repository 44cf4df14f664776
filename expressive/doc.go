// Package expressive studies the expressive power of self-attention matrices after
// Likhosherstov, Choromanski and Weller (2021), "On the Expressive Power of Self-Attention
// Matrices" (docs/math.md, "Expressive power of attention matrices"): a self-attention module with fixed parameters can approximate
// any sparse nonnegative attention pattern by changing only its input.
//
// The package provides random k-sparse targets (target.go), the precision measures of
// docs/math.md, "Expressive power of attention matrices" (precision.go), the attention matrix of a fixed module (module.go), two
// methods that realise a target with a module of head width d (jl.go: the constructive
// Johnson-Lindenstrauss algorithm, whose margin is fixed or chosen exactly per cell or per
// target in margin.go; gd.go: gradient descent on the input of a random module), a search
// for the smallest d reaching a success rate (search.go, cell.go), least-squares fits of
// that d against log L and L (fit.go), and the experiment over a grid of methods, k and L
// (experiment.go) with its JSON lines, read back by ReadCells (record.go, input.go),
// table, CSV and plot (report.go, plot.go).
//
// gd minimises a smooth loss of the ratio errors and leak (loss.go): the logits Z are a
// Gorgonia graph of the input, differentiated by one G.Grad and run on a tape machine
// compiled once per target shape (gdmachine.go), with train.Adam; the loss of Z is one
// float64 op with a hand-written gradient (lossop.go) that computes the loss and dL/dZ in
// one parallel pass over the rows.
//
// Every random quantity is drawn from math/rand/v2 PCG streams derived from an explicit
// seed (rng.go): the same seed gives the same result.
package expressive
