package lipschitz

// GELULip is the Lipschitz constant of the exact GELU x Phi(x): the maximum
// of its derivative Phi(x) + x phi(x), reached at x = sqrt 2, where it equals
// (1 + erf(1))/2 + 1/(e sqrt(pi)), about 1.1289. (The derivative's minimum,
// about -0.1289 at x = -sqrt 2, is smaller in magnitude.)
const GELULip = 1.128904145185155
