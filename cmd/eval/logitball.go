package main

import (
	"fmt"
	"io"
	"log/slog"
	"time"

	"lipformer/data"
	"lipformer/ngram"
)

// boundedOrders are the orders of the bounded count models set beside a logit radius: 2
// to top (-bounded-order; 3 by default, since a fit of order 4 or more takes minutes on
// Tiny Shakespeare).
func boundedOrders(top int) []int {
	var orders []int
	for n := 2; n <= top; n++ {
		orders = append(orders, n)
	}
	return orders
}

// ballReport is what a logit radius allows on the split (docs/math.md, "What a logit ball
// allows"): the floor no model whose logits stay within the radius of one point per
// position can score below, and the bounded count models of ngram.TrainBounded.
type ballReport struct {
	Radius float64 `json:"radius"`
	// Certified marks the checkpoint's own certified logit radius (its token-norm
	// certificate times the radius of its token vectors).
	Certified bool           `json:"certified"`
	FloorBPC  float64        `json:"floor_bpc"`
	Bounded   []ngram.Result `json:"bounded"`
}

// logitBall computes a ballReport at each radius for the targets of tokens (the split
// text, encoded) scored in windows of ctx advanced by stride, each window offset one group
// of the floor; the bounded models are trained on train.
func logitBall(train, text []byte, tokens []uint8, vocab []byte, ctx, stride int, radii []float64, certified, top int, log *slog.Logger) ([]ballReport, error) {
	groups, err := offsetGroups(tokens, ctx, stride)
	if err != nil {
		return nil, err
	}
	ids := make([]byte, len(vocab)) // the floor's vocabulary: the compact ids
	for i := range ids {
		ids[i] = byte(i)
	}
	var out []ballReport
	for i, rho := range radii {
		start := time.Now()
		r := ballReport{Radius: rho, Certified: i == certified}
		log.Info("logit ball: the floor", "radius", rho, "groups", len(groups))
		if r.FloorBPC, err = ngram.Floor(groups, ids, rho); err != nil {
			return nil, fmt.Errorf("logit radius %g: %w", rho, err)
		}
		for _, n := range boundedOrders(top) {
			// a fit takes seconds on Tiny Shakespeare and minutes on enwik7
			log.Info("logit ball: fitting a bounded count model", "radius", rho, "model", ngram.Name(n), "train_bytes", len(train))
			res, err := ngram.BoundedBaselines(train, text, vocab, []int{n}, rho)
			if err != nil {
				return nil, fmt.Errorf("logit radius %g: %w", rho, err)
			}
			r.Bounded = append(r.Bounded, res...)
		}
		log.Info("logit ball", "radius", rho, "seconds", fmt.Sprintf("%.2f", time.Since(start).Seconds()))
		out = append(out, r)
	}
	return out, nil
}

// offsetGroups returns the scored targets of tokens in windows of ctx advanced by stride,
// grouped by their offset in their window: a model's logits at one offset lie within its
// logit radius of one point, whatever the text.
func offsetGroups(tokens []uint8, ctx, stride int) ([][]byte, error) {
	w, err := data.NewStridedEvalWindows(tokens, ctx, stride, 1)
	if err != nil {
		return nil, err
	}
	groups := make([][]byte, ctx)
	x, y := make([]int, ctx), make([]int, ctx)
	for i := range w.Batches() {
		if _, err := w.Batch(i, x, y); err != nil {
			return nil, err
		}
		for t, id := range y {
			if id != data.IgnoreTarget {
				groups[t] = append(groups[t], byte(id))
			}
		}
	}
	return groups, nil
}

// printLogitBall writes a line for each radius.
func printLogitBall(w io.Writer, corpus, split string, reports []ballReport, lipschitz, tokenRadius float64) {
	for _, r := range reports {
		how := ""
		if r.Certified {
			how = fmt.Sprintf(" (the certified one: %.4g in the token norm x the token vectors' radius %.4g)", lipschitz, tokenRadius)
		}
		fmt.Fprintf(w, "logit radius %.4g%s: no model whose logits at a position stay within it of one point scores below %.4f bpc on %s %s; bounded count models: %s bpc\n",
			r.Radius, how, r.FloorBPC, corpus, split, ngram.Format(r.Bounded))
	}
}
