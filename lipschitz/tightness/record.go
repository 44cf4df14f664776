package tightness

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Record is the result of one cell (N, R), also its JSON object.
type Record struct {
	Attn          string    `json:"attn"`
	Norm          string    `json:"norm"`
	N             int       `json:"n"`
	D             int       `json:"d"`
	Heads         int       `json:"heads"`
	Causal        bool      `json:"causal"`
	Weights       string    `json:"weights"`
	Radius        float64   `json:"radius"`          // box ||X||_inf <= R; 0: none
	Upper         *float64  `json:"upper"`           // upper bound on Lip_p; null for dp
	Lower         float64   `json:"lower"`           // best ||J(X)||_p found: a lower bound on Lip_p
	Ratio         *float64  `json:"ratio"`           // lower / upper; null for dp
	UpperAsStated *float64  `json:"upper_as_stated"` // [K]'s 2-norm formula as stated (not a bound); null for inf
	UpperProduct  *float64  `json:"upper_product"`   // the product-form inf-norm bound; null for dp and the 2-norm
	RatioProduct  *float64  `json:"ratio_product"`   // lower / upper_product
	UpperTok2     *float64  `json:"upper_token2"`    // the token-norm bound; null for dp
	LowerTok2     *float64  `json:"lower_token2"`    // the token norm of J at the best input found: a lower bound on it
	RatioTok2     *float64  `json:"ratio_token2"`    // lower_token2 / upper_token2
	LowerMedian   float64   `json:"lower_median"`    // median over starts of each start's best
	LowerRandom   *float64  `json:"lower_random"`    // best over the random starts only; null when every start was seeded
	WarmStart     bool      `json:"warm_start"`      // start 0 began at the previous radius's best input
	ClusterStart  bool      `json:"cluster_start"`   // the start after the warm one (if any) began at the best two-cluster input
	Construction  float64   `json:"construction"`    // largest ||J||_p over the two-cluster inputs (see constructionInput); 0 when skipped
	ConstructionT float64   `json:"construction_t"`  // their spread t
	BestStart     int       `json:"best_start"`
	PhiInv        float64   `json:"phi_inv"` // W_0((N-1)/e)
	Inits         int       `json:"inits"`
	Steps         int       `json:"steps"`
	Refresh       int       `json:"refresh"`
	LR            float64   `json:"lr"`
	Escape        float64   `json:"escape"`
	Restarts      int       `json:"restarts"`
	Perturb       float64   `json:"perturb"` // the restarts' noise: times sd / sqrt(N) per entry (up to 5acd4e8: times sd)
	InitMin       float64   `json:"init_min"`
	InitMax       float64   `json:"init_max"`
	Seed          uint64    `json:"seed"`
	Engine        string    `json:"engine"`
	Seconds       float64   `json:"seconds"`
	X             []float64 `json:"x,omitempty"` // the input, only when lower > upper
}

// ReadRecords reads the JSON records written one per line (or concatenated) by a run.
func ReadRecords(r io.Reader) ([]Record, error) {
	var recs []Record
	dec := json.NewDecoder(r)
	for {
		var rec Record
		err := dec.Decode(&rec)
		if errors.Is(err, io.EOF) {
			return recs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("tightness: record %d: %w", len(recs)+1, err)
		}
		recs = append(recs, rec)
	}
}
