// Package tightness measures how tight the Lipschitz upper bounds of attention are: it
// compares empirical lower bounds, found by package lipschitz/search, with the upper
// bounds of package lipschitz, for one attention layer over a grid of sequence lengths N
// and box radii R (Kim et al. 2021, section 5.1; docs/math.md, "Attention"), and for the
// tied L2 attention layers of a trained model against its certificate.
//
// For each N (and R) Run maximises ||J(X)||_p, the norm of the exact (ND, ND) Jacobian
// of the layer, over inputs X by Adam from several starts; the best value met is a lower
// bound on Lip_p. For tied L2 attention it also reports the upper bound
// (lipschitz.L2MHABoundInf for the inf-norm, the corrected lipschitz.L2MHABound2 for the
// 2-norm, and the 2-norm formula as [K] state it next to it) and their ratio. D = H = 1
// layers use a closed-form Jacobian in plain Go (O(N^2) per step); others go through the
// layer's Gorgonia graph.
//
// Dot-product attention is not Lipschitz: it is searched inside boxes ||X||_inf <= R,
// starting uniformly in the box. Its maximum is a ridge of width about 1/R (the token
// whose row is uniform must stay near 0), which steps of size 0.03 resolve; reaching
// R = 50 then takes 2000 steps. With several radii and Config.Warm, the first start of
// each radius begins at the previous radius's best input scaled; the record keeps the
// best of the random starts alone too.
//
// Unless Config.NoConstruction, every record also holds the best value over two-cluster
// inputs (one token 0, the others alternately +t and -t, t up to R in a box, else 10,
// scanned and refined; construction.go), and one start climbs from the best of them, so
// that the lower bound is at least that value; the best of the random starts alone is
// kept beside it. For dot-product attention at t = R that input is dp's unbounded
// construction (docs/math.md, "Attention"); for D = H = 1 L2 attention it reaches about
// 4 W_0((N-1)/e) + 1 - 2W/(W+1), within 2 of the upper bound, and its 2-norm is within
// 0.4% of the best found from N = 8 on.
//
// For tied L2 attention every record also holds this project's bounds (others.go): the
// product-form inf-norm bound beside [K]'s, and the token-norm bound beside the token norm
// of J at the best input found. RunShapes repeats a run over widths D and heads H, with
// its own table and plot of the ratios against D (width.go).
//
// The records are written as a table with fits (the lower bound against W_0((N-1)/e) and
// log N - log log N; growth exponents in R), as CSV, and as a plot (report.go, plot.go).
// Certify reports a model's certificate beside searched lower bounds (certify.go).
package tightness
