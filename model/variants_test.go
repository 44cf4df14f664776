package model

import (
	"fmt"

	"lipformer/ops"
	"lipformer/spec"
)

// tiny is a float64 model small enough for finite differences.
func tiny(arch string) Config {
	return Config{Arch: mustArch(arch), Layers: 2, Heads: 2, Width: 8, Context: 5, Vocab: 7, Norm: spec.PreLN, LipC: 0.9, Dtype: spec.Float64, Std: 0.3}
}

// mustArch is the architecture of that name; an unknown name is a mistake of the test.
func mustArch(name string) spec.Arch {
	a, err := spec.ParseArch(name)
	if err != nil {
		panic(err)
	}
	return a
}

// mustBound is the bound form of that name, kim for "".
func mustBound(name string) ops.BoundForm {
	var f ops.BoundForm
	if name == "" {
		return f
	}
	if err := f.UnmarshalText([]byte(name)); err != nil {
		panic(err)
	}
	return f
}

// mustNorm is the norm placement of that name.
func mustNorm(name string) spec.Norm {
	n, err := spec.ParseNorm(name)
	if err != nil {
		panic(err)
	}
	return n
}

// archNames are the names of every architecture.
func archNames() []string {
	var names []string
	for _, a := range spec.Archs {
		names = append(names, a.String())
	}
	return names
}

// variant is a named test configuration.
type variant struct {
	name string
	cfg  Config
}

// variants are the tiny configurations of every architecture, of dp and l2 with the head
// tied to the token embedding, of invertible-l2 with balanced value maps, and of tied L2
// with temperatures, position biases and the product and token2 bounds, and of ball norms
// (the certified recipe where it applies), of mixing sub-blocks and of pair and triple tokens.
func variants() []variant {
	var vs []variant
	for _, arch := range archNames() {
		vs = append(vs, variant{arch, tiny(arch)})
	}
	for _, arch := range []string{"dp", "l2"} {
		c := tiny(arch)
		c.Tie = true
		vs = append(vs, variant{arch + "-tied", c})
	}
	c := tiny("invertible-l2")
	c.BalanceL2 = true
	vs = append(vs, variant{"invertible-l2-balanced", c})
	c = tiny("invertible-l2")
	c.MLPBlocks = 1 // the recipe's sub-blocks are the mlp-blocks variants'
	c = c.WithCertifiedRecipe()
	c.MLPGain = 3
	vs = append(vs, variant{"invertible-l2-recipe-gain", c})
	for _, v := range []struct {
		arch, bound string
		bias        bool
	}{{"contractive-l2", "product", false}, {"contractive-l2", "token2", true}, {"invertible-l2", "token2", true}, {"l2", "", true}} {
		c := tiny(v.arch)
		c.L2Bound, c.L2Temp, c.L2PosBias = mustBound(v.bound), true, v.bias
		vs = append(vs, variant{fmt.Sprintf("%s-%s-temp-bias=%t", v.arch, v.bound, v.bias), c})
	}
	for _, k := range []float64{2, 1000} {
		c := tiny("invertible-l2")
		c.LipK = k // before the recipe, as train sets it
		c = c.WithCertifiedRecipe()
		vs = append(vs, variant{fmt.Sprintf("invertible-l2-lip-k-%g", k), c})
	}
	c = tiny("invertible-l2")
	c.LipK, c.Norm, c.BallRadius = 10, spec.BallPre, 0.3
	c = c.WithCertifiedRecipe()
	vs = append(vs, variant{"invertible-l2-lip-k-ball", c})
	c = tiny("invertible-l2")
	c.LipK, c.EmbedRadius = 10, 0.05 // below an embedded token's typical norm, so the ball bites
	c = c.WithCertifiedRecipe()
	vs = append(vs, variant{"invertible-l2-lip-k-embed-radius", c})
	c = tiny("invertible-l2").WithCertifiedRecipe()
	c.MLPBlocks = 3
	vs = append(vs, variant{"invertible-l2-recipe-mlp-blocks-3", c})
	c = tiny("invertible-l2").WithCertifiedRecipe()
	c.LipK, c.MLPBlocks, c.Norm, c.BallRadius = 10, 2, spec.BallPre, 0.3
	vs = append(vs, variant{"invertible-l2-lip-k-ball-mlp-blocks-2", c})
	for _, arch := range []string{"dp", "contractive-l2", "invertible-l2"} {
		c := tiny(arch)
		if arch == "invertible-l2" {
			c.MLPBlocks = 1 // the recipe's sub-blocks are the mlp-blocks variants'
		}
		c = c.WithCertifiedRecipe()
		c.Norm, c.BallRadius = spec.BallPre, 0.3 // radius 0.85, below an embedded token's typical 0.3 sqrt(2D) = 1.2
		vs = append(vs, variant{arch + "-ball", c})
	}
	for _, arch := range []string{"dp", "contractive-l2"} {
		c := tiny(arch).WithCertifiedRecipe()
		c.Mix = 3
		vs = append(vs, variant{arch + "-mix", c})
	}
	c = tiny("invertible-l2").WithCertifiedRecipe()
	c.MLPBlocks, c.Mix = 2, 3
	vs = append(vs, variant{"invertible-l2-recipe-mix", c})
	c = tiny("invertible-l2")
	c.LipK, c.Mix = 10, 5 // every position's whole past
	c = c.WithCertifiedRecipe()
	vs = append(vs, variant{"invertible-l2-lip-k-mix", c})
	c = tiny("invertible-l2")
	c.LipK, c.Mix, c.Activation = 10, 5, "maxmin"
	c = c.WithCertifiedRecipe()
	vs = append(vs, variant{"invertible-l2-lip-k-mix-maxmin", c})
	c = tiny("invertible-l2").WithCertifiedRecipe()
	c.MLPBlocks, c.MLPGain, c.Activation = 2, 3, "maxmin" // the fused op with a gain
	vs = append(vs, variant{"invertible-l2-recipe-gain-maxmin", c})
	c = tiny("dp")
	c.TokenBytes = 2
	vs = append(vs, variant{"dp-pairs", c})
	c = tiny("invertible-l2")
	c.LipK, c.EmbedRadius, c.Mix, c.TokenBytes = 10, 0.05, 2, 3
	c = c.WithCertifiedRecipe()
	vs = append(vs, variant{"invertible-l2-lip-k-triples", c})
	return vs
}
