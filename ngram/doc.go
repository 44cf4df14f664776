// Package ngram provides byte-level n-gram count models, the baselines that
// every language-model score is set beside: a transformer's bits per byte
// means little without the bigram, trigram and 5-gram numbers of the same
// split. [Floor] and [Bounded] set the same kind of baseline beside a model bounded end to
// end: what a logit radius allows (docs/math.md, "What a logit ball allows").
//
// A [Model] of order n predicts a byte from the n-1 bytes before it with
// interpolated Kneser-Ney smoothing (Chen and Goodman, 1998, "interpolated
// KN"), the plain variant: one absolute discount per order, not the three of
// modified Kneser-Ney. For order k and a context h of k-1 bytes,
//
//	p_k(w | h) = max(c_k(hw) - D_k, 0) / c_k(h·) + D_k · N_k(h·) / c_k(h·) · p_{k-1}(w | h')
//
// where h' is h without its first byte, c_k(h·) is the sum of c_k(hw) over
// all bytes w, and N_k(h·) is the number of bytes w with c_k(hw) > 0. A
// context never seen in training (c_k(h·) = 0) passes the lower order through
// unchanged: p_k(w | h) = p_{k-1}(w | h'). Below order 1 is the uniform
// distribution over the vocabulary, p_0(w) = 1/|V|, so every byte of the
// vocabulary has a nonzero probability without add-one counts.
//
// The counts c_k are the training counts of k-grams at the model's own
// order n and Kneser-Ney continuation counts at the lower orders: c_k(g) for
// k < n is the number of distinct bytes that precede the k-gram g in the
// text, plus one when g begins the text (as if the text were preceded by a
// start symbol). Each order's discount is estimated from the count-of-counts
// of its own counts, D_k = n1 / (n1 + 2·n2), where n1 and n2 are the numbers
// of k-grams with count exactly 1 and 2, and clamped to [0.01, 0.99] so that
// it stays inside (0, 1) when n1 or n2 is 0 (tiny texts only).
//
// A context shorter than n-1 bytes, as at the start of a split, is predicted
// at the order it can fill: with j bytes of context the model answers
// p_{j+1}, with the lower-order (continuation) counts at the top.
//
// Counts live in hash maps keyed by the k-gram's bytes packed into a uint64,
// one map per order, so the order is at most 8. [Model.BPC] scores a text by
// the project's convention for language models: the mean of -log2 p over
// every byte but the first, each byte predicted from the up to n-1 bytes that
// precede it in the text. [Baselines] trains one model per order on a train
// split and scores another split with each.
package ngram
