package ngram

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"lipformer/data"
)

// The hand-counted example: "mississippi" over the vocabulary {i, m, p, s, z},
// z never occurring, so |V| = 5 and the uniform floor is 1/5.
const (
	hand      = "mississippi"
	handVocab = "impsz"
)

// TestHandCountedProbabilities checks probabilities of "mississippi" worked out
// by hand from the formula in the package documentation.
//
// Order 1 (training counts): i 4, s 4, p 2, m 1; total 11, 4 types; one count
// of 1 and one of 2, so D = 1/(1+2) = 1/3. The floor term is
// (1/3)(4/11)(1/5) = 4/165.
//
// Order 2: bigram counts mi 1, is 2, ss 2, si 2, ip 1, pp 1, pi 1: four 1s,
// three 2s, D2 = 4/10. Continuation counts of the unigrams (distinct bytes
// before them, plus one for the m that starts the text): i 3 (m, s, p), s 2
// (i, s), p 2 (i, p), m 1 (start); total 8, 4 types; one 1 and two 2s,
// D1 = 1/5. So p1(i) = 2.8/8 + 0.2(4/8)(1/5) = 0.37, p1(s) = p1(p) = 0.245,
// p1(m) = 0.12, p1(z) = 0.02.
//
// Order 3: trigram counts mis 1, iss 2, ssi 2, sis 1, sip 1, ipp 1, ppi 1,
// D3 = 5/9. Continuation counts of the bigrams: is 2 (m, s), mi 1 (start),
// and 1 each for ss, si, ip, pp, pi; D2 = 6/(6+2) = 3/4. Order 1 is as in the
// bigram model.
func TestHandCountedProbabilities(t *testing.T) {
	for _, c := range []struct {
		order   int
		context string
		b       byte
		want    float64
	}{
		{1, "", 'i', (4-1.0/3)/11 + 4.0/165}, // 59/165
		{1, "", 's', 59.0 / 165},
		{1, "", 'p', (2-1.0/3)/11 + 4.0/165}, // 29/165
		{1, "", 'm', (1-1.0/3)/11 + 4.0/165}, // 14/165
		{1, "", 'z', 4.0 / 165},
		{1, "ss", 'i', 59.0 / 165}, // context ignored
		{2, "", 'i', 0.37},
		{2, "", 'm', 0.12},
		{2, "", 'z', 0.02},
		// context s: ss 2, si 2; total 4, 2 types: (2-0.4)/4 + 0.4(2/4) p1.
		{2, "s", 's', 0.4 + 0.2*0.245}, // 0.449
		{2, "s", 'i', 0.4 + 0.2*0.37},  // 0.474
		{2, "s", 'p', 0.2 * 0.245},     // 0.049
		{2, "s", 'z', 0.2 * 0.02},      // 0.004
		// context m: mi 1; total 1, 1 type.
		{2, "m", 'i', 0.6 + 0.4*0.37}, // 0.748
		{2, "xm", 'i', 0.6 + 0.4*0.37},
		// context z was never seen: order 1 passes through.
		{2, "z", 'i', 0.37},
		// Order 3 with one byte of context: the bigram continuation counts.
		// Context s: ss 1, si 1; total 2, 2 types: (1-0.75)/2 + 0.75 p1.
		{3, "s", 'i', 0.125 + 0.75*0.37},  // 0.4025
		{3, "s", 's', 0.125 + 0.75*0.245}, // 0.30875
		// Context m: mi 1 (start); total 1, 1 type.
		{3, "m", 'i', 0.25 + 0.75*0.37}, // 0.5275
		// Context i: is 2, ip 1; total 3, 2 types: 0.75(2/3) p1 = 0.5 p1.
		{3, "i", 's', 1.25/3 + 0.5*0.245}, // 0.5391667
		{3, "i", 'p', 0.25/3 + 0.5*0.245}, // 0.2058333
		{3, "", 'm', 0.12},
		// Context ss: ssi 2; total 2, 1 type: (2-5/9)/2 + (5/9)(1/2) p2(·|s).
		{3, "ss", 'i', 13.0/18 + 5.0/18*(0.125+0.75*0.37)}, // 1201/1440
		{3, "ss", 's', 5.0 / 18 * (0.125 + 0.75*0.245)},    // 247/2880
		{3, "iss", 's', 5.0 / 18 * (0.125 + 0.75*0.245)},   // only "ss" is used
		// Context is: iss 2.
		{3, "is", 's', 13.0/18 + 5.0/18*(0.125+0.75*0.245)}, // 2327/2880
		// Context si: sis 1, sip 1; total 2, 2 types: (1-5/9)/2 + (5/9) p2(·|i).
		{3, "si", 's', 2.0/9 + 5.0/9*(1.25/3+0.5*0.245)}, // 1127/2160
		{3, "si", 'p', 2.0/9 + 5.0/9*(0.25/3+0.5*0.245)},
		{3, "si", 'i', 5.0 / 9 * 0.5 * 0.37},
		// Context zs was never seen: order 2 of the trigram model passes through.
		{3, "zs", 'i', 0.125 + 0.75*0.37},
	} {
		m, err := Train([]byte(hand), c.order, []byte(handVocab))
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Prob([]byte(c.context), c.b); math.Abs(got-c.want) > 1e-14 {
			t.Errorf("order %d: p(%c | %q) = %.16g, want %.16g", c.order, c.b, c.context, got, c.want)
		}
	}
	for order, want := range map[int][]float64{1: {1.0 / 3}, 2: {0.2, 0.4}, 3: {0.2, 0.75, 5.0 / 9}} {
		m, err := Train([]byte(hand), order, []byte(handVocab))
		if err != nil {
			t.Fatal(err)
		}
		got := m.Discounts()
		for k := range want {
			if len(got) != len(want) || math.Abs(got[k]-want[k]) > 1e-15 {
				t.Errorf("order %d: discounts %v, want %v", order, got, want)
				break
			}
		}
	}
	if m, _ := Train([]byte(hand), 2, []byte(handVocab)); m.Prob([]byte("s"), 'x') != 0 {
		t.Error("a byte outside the vocabulary has a nonzero probability")
	}
}

// TestDiscountClamp: with no count of 2 the estimate n1/(n1+2 n2) is 1 and is
// clamped below 1; with no count of 1 it is 0 and is clamped above 0.
func TestDiscountClamp(t *testing.T) {
	if d := discount(5, 0); d != maxDiscount {
		t.Errorf("discount(5, 0) = %g, want %g", d, maxDiscount)
	}
	if d := discount(0, 5); d != minDiscount {
		t.Errorf("discount(0, 5) = %g, want %g", d, minDiscount)
	}
	if d := discount(3, 6); d != 0.2 {
		t.Errorf("discount(3, 6) = %g, want 0.2", d)
	}
}

// normText is a training text over "abc" with some repetition and some noise;
// the vocabulary adds d, which never occurs.
func normText() []byte {
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for range 40 {
		b.WriteString("abcab")
		for range r.IntN(4) {
			b.WriteByte("abc"[r.IntN(3)])
		}
	}
	return []byte(b.String())
}

// TestNormalized: for every order and every context of length 0 to order-1
// over the vocabulary and one byte outside it, seen or unseen in training,
// the probabilities are positive and sum to 1 over the vocabulary.
func TestNormalized(t *testing.T) {
	text, vocab := normText(), []byte("abcd")
	alphabet := []byte("abcdx")
	for order := 1; order <= MaxOrder; order++ {
		m, err := Train(text, order, vocab)
		if err != nil {
			t.Fatal(err)
		}
		contexts, seen := 0, 0
		ctx := make([]byte, 0, order)
		var visit func()
		visit = func() {
			contexts++
			if seenContext(m, ctx) {
				seen++
			}
			var sum float64
			for _, b := range vocab {
				p := m.Prob(ctx, b)
				if !(p > 0) {
					t.Fatalf("order %d: p(%c | %q) = %g, want > 0", order, b, ctx, p)
				}
				sum += p
			}
			if math.Abs(sum-1) > 1e-12 {
				t.Fatalf("order %d: probabilities after %q sum to 1%+.3g", order, ctx, sum-1)
			}
			if len(ctx) == order-1 {
				return
			}
			for _, c := range alphabet {
				ctx = append(ctx, c)
				visit()
				ctx = ctx[:len(ctx)-1]
			}
		}
		visit()
		if order > 1 && (seen < 2 || seen == contexts) {
			t.Fatalf("order %d: %d of %d contexts seen in training; the test needs both kinds", order, seen, contexts)
		}
	}
}

// seenContext reports whether the context (its last order-1 bytes) occurs in
// the model's counts at the order it fills.
func seenContext(m *Model, ctx []byte) bool {
	n := min(len(ctx), m.order-1)
	var h uint64
	for _, c := range ctx[len(ctx)-n:] {
		h = h<<8 | uint64(c)
	}
	_, ok := m.levels[n].contexts[h]
	return ok
}

// TestLongContextIsTruncated: bytes beyond the last order-1 make no difference.
func TestLongContextIsTruncated(t *testing.T) {
	text := normText()
	m, err := Train(text, 4, []byte("abcd"))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []byte("abcd") {
		if p, q := m.Prob([]byte("cbcab"), b), m.Prob([]byte("cab"), b); p != q {
			t.Errorf("p(%c | cbcab) = %g, p(%c | cab) = %g", b, p, b, q)
		}
	}
}

// TestBPCMatchesProb: BPC is the mean of -log2 Prob over every byte but the
// first, each given the text before it.
func TestBPCMatchesProb(t *testing.T) {
	train, eval := normText(), []byte("abcabdcbaabcabcccabcab")
	for order := 1; order <= MaxOrder; order++ {
		m, err := Train(train, order, []byte("abcd"))
		if err != nil {
			t.Fatal(err)
		}
		var bits float64
		for i := 1; i < len(eval); i++ {
			bits -= math.Log2(m.Prob(eval[:i], eval[i]))
		}
		want := bits / float64(len(eval)-1)
		got, err := m.BPC(eval)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("order %d: BPC %.15g, mean -log2 Prob %.15g", order, got, want)
		}
	}
}

// TestHigherOrderFitsTrainingBetter: on a repetitive text, the training-set
// bpc never rises with the order.
func TestHigherOrderFitsTrainingBetter(t *testing.T) {
	text := []byte(strings.Repeat("the cat sat on the mat; the rat sat on the cat. ", 30))
	vocab := vocabOf(text)
	prev := math.Inf(1)
	for order := 1; order <= MaxOrder; order++ {
		m, err := Train(text, order, vocab)
		if err != nil {
			t.Fatal(err)
		}
		bpc, err := m.BPC(text)
		if err != nil {
			t.Fatal(err)
		}
		if bpc > prev {
			t.Errorf("order %d: training bpc %.4f, above order %d's %.4f", order, bpc, order-1, prev)
		}
		t.Logf("order %d: training bpc %.4f", order, bpc)
		prev = bpc
	}
	if prev > 0.2 {
		t.Errorf("the 8-gram's training bpc is %.4f on a text that repeats one sentence", prev)
	}
}

// vocabOf returns the distinct bytes of text.
func vocabOf(text []byte) []byte {
	var seen [256]bool
	var vocab []byte
	for _, b := range text {
		if !seen[b] {
			seen[b] = true
			vocab = append(vocab, b)
		}
	}
	return vocab
}

func TestErrors(t *testing.T) {
	for _, c := range []struct {
		text, vocab string
		order       int
		want        string
	}{
		{"abc", "abc", 0, "order 0"},
		{"abc", "abc", 9, "order 9"},
		{"abc", "", 2, "vocabulary is empty"},
		{"abc", "abca", 2, "0x61 'a' appears twice"},
		{"abcz", "abc", 2, "byte 0x7a 'z' at offset 3 of the training text"},
		{"ab\x00", "ab", 2, "byte 0x00 at offset 2"},
	} {
		_, err := Train([]byte(c.text), c.order, []byte(c.vocab))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Train(%q, %d, %q): error %v, want one containing %q", c.text, c.order, c.vocab, err, c.want)
		}
	}
	m, err := Train([]byte("abc"), 2, []byte("abcd"))
	if err != nil {
		t.Fatal(err)
	}
	for text, want := range map[string]string{"abqd": "byte 0x71 'q' at offset 2 of the evaluated text", "a": "at least 2", "": "at least 2"} {
		if _, err := m.BPC([]byte(text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("BPC(%q): error %v, want one containing %q", text, err, want)
		}
	}
	if _, err := Baselines([]byte("abc"), []byte("abz"), []byte("abc"), []int{2}); err == nil || !strings.Contains(err.Error(), "0x7a 'z'") {
		t.Errorf("Baselines with an unknown byte in eval: error %v", err)
	}
	if _, err := Baselines([]byte("abc"), []byte("ab"), []byte("abc"), []int{2, 10}); err == nil || !strings.Contains(err.Error(), "order 10") {
		t.Errorf("Baselines with order 10: error %v", err)
	}
}

// TestShortTexts: training texts shorter than the order still give a
// normalized model (the uniform floor and whatever orders the text fills).
func TestShortTexts(t *testing.T) {
	for _, text := range []string{"", "a", "ab", "abc"} {
		m, err := Train([]byte(text), 5, []byte("abc"))
		if err != nil {
			t.Fatal(err)
		}
		var sum float64
		for _, b := range []byte("abc") {
			sum += m.Prob([]byte("abca"), b)
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("trained on %q: probabilities sum to %.15g", text, sum)
		}
	}
	m, _ := Train(nil, 3, []byte("abcd"))
	if p := m.Prob([]byte("ab"), 'c'); p != 0.25 {
		t.Errorf("trained on nothing: p = %g, want the uniform 0.25", p)
	}
}

func TestNames(t *testing.T) {
	for order, want := range map[int]string{1: "unigram", 2: "bigram", 3: "trigram", 4: "4-gram", 5: "5-gram", 8: "8-gram"} {
		if got := Name(order); got != want {
			t.Errorf("Name(%d) = %q, want %q", order, got, want)
		}
	}
	got := Format([]Result{{2, 3.51}, {3, 2.82}, {5, 2.2}})
	if want := "bigram 3.5100, trigram 2.8200, 5-gram 2.2000"; got != want {
		t.Errorf("Format = %q, want %q", got, want)
	}
}

// TestOpticksHeldOut: on the default corpus, Newton's Opticks, trained on its
// train part and scored on its test part, the 5-gram beats the trigram,
// which beats the bigram, which beats the unigram.
func TestOpticksHeldOut(t *testing.T) {
	c, err := data.Load(context.Background(), "", data.Options{})
	if err != nil {
		t.Skipf("the default corpus is not available: %v", err)
	}
	res, err := Baselines(c.Train, c.Test, c.Vocab.Bytes(), []int{1, 2, 3, 5})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("opticks test split, %d bytes: %s", len(c.Test), Format(res))
	for i := 1; i < len(res); i++ {
		if !(res[i].BPC < res[i-1].BPC) {
			t.Errorf("%s %.4f bpc is not below %s %.4f", res[i].Name(), res[i].BPC, res[i-1].Name(), res[i-1].BPC)
		}
	}
	if res[0].BPC > 5 || res[3].BPC > 2.6 {
		t.Errorf("unigram %.4f bpc, 5-gram %.4f: English text should be below 5 and 2.6", res[0].BPC, res[3].BPC)
	}
}
