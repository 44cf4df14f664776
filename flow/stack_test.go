package flow

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"lipformer/internal/ref"
	"lipformer/layers"
	"lipformer/model"
)

// TestStackIsTheModel: the embeddings (Embed, of n-byte tokens too) run through the stack,
// then the final LayerNorm and the head in plain Go, give the logits of the model's own
// sampling program.
func TestStackIsTheModel(t *testing.T) {
	for _, arch := range []string{"invertible-l2", "invertible-l2+gain", "invertible-l2+ball", "invertible-l2+mlps", "invertible-l2+mix", "invertible-l2+triples", "invertible-dp"} {
		m, st := testStack(t, arch, 8)
		ids := randomIDs(m, 9)
		x, err := Embed(m, ids)
		if err != nil {
			t.Fatal(err)
		}
		states, err := st.Forward(x)
		if err != nil {
			t.Fatal(err)
		}
		p, err := m.NewProgram(model.Sample, testBatch)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		copy(p.Inputs, ids)
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
		out := states[len(states)-1]
		rows := make([][]float64, len(ids))
		for r := range rows {
			rows[r] = out[r*testD : (r+1)*testD]
		}
		lnf := m.Final.(*layers.LayerNorm)
		h, err := ref.LayerNorm(rows, lnf.Gain.Float64s(), lnf.Bias.Float64s(), lnf.Eps)
		if err != nil {
			t.Fatal(err)
		}
		logits, err := ref.Linear(h, mat.NewDense(testD, m.Cfg.Vocab, m.Head.W.Float64s()), nil)
		if err != nil {
			t.Fatal(err)
		}
		for r := range logits {
			row, err := p.Logits(r)
			if err != nil {
				t.Fatal(err)
			}
			for k, want := range logits[r] {
				if got := row[k]; math.Abs(got-want) > 1e-12 {
					t.Fatalf("%s: logit [%d,%d] %.15g from the stack, %.15g from the model", arch, r, k, want, got)
				}
			}
		}
	}
}

// TestStackInverts: the stack's output on embedded tokens is inverted, last sub-block
// first, back to the embeddings, and every sub-block's input is reconstructed; with three
// MLP sub-blocks per block the stack has four sub-blocks a block, named as the certificate
// names its factors.
func TestStackInverts(t *testing.T) {
	for _, arch := range []string{"invertible-l2", "invertible-l2+mlps", "invertible-l2+mix"} {
		t.Run(arch, func(t *testing.T) { testStackInverts(t, arch) })
	}
}

func testStackInverts(t *testing.T, arch string) {
	m, st := testStack(t, arch, 8)
	if len(st.Subs) != m.Cfg.SubBlocks() {
		t.Fatalf("%d sub-blocks, want %d", len(st.Subs), m.Cfg.SubBlocks())
	}
	cert, err := m.Certificate()
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range st.Subs {
		if f := cert.Factors[i]; f.Name != s.Name {
			t.Errorf("sub-block %d is %s, the certificate's factor %d %s", i, s.Name, i, f.Name)
		}
	}
	x, err := Embed(m, randomIDs(m, 10))
	if err != nil {
		t.Fatal(err)
	}
	states, err := st.Forward(x)
	if err != nil {
		t.Fatal(err)
	}
	xhat, results, err := st.Invert(states[len(states)-1], states, Options{Tol: 1e-12, MaxIter: 500})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		if r.Block != st.Subs[i].Name || !r.Converged || r.Error > 1e-9 {
			t.Errorf("sub-block %d: %s converged %t, error %.3g", i, r.Block, r.Converged, r.Error)
		}
	}
	if e := SeqInf.Dist(xhat, x, testD); e > 1e-9 {
		t.Errorf("embeddings reconstructed to %.3g", e)
	}
}

// randomIDs is a batch of random token windows.
func randomIDs(m *model.Model, seed uint64) []int {
	r := rand.New(rand.NewPCG(seed, 1))
	ids := make([]int, testBatch*testT)
	for i := range ids {
		ids[i] = r.IntN(m.Cfg.Vocab)
	}
	return ids
}
