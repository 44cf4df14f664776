package train

import "lipformer/model"

// EstimateMemory estimates the peak memory of one process of a training run of a model of
// cfg with options opt, of `replicas` processes, on a corpus of corpusBytes bytes: the
// model, its training program and its evaluation program for the process's share of the
// batch, the optimizer, and the corpus with its tokens (model.EstimateMemory). The n-gram
// baselines of the final scores are not counted.
func EstimateMemory(cfg model.Config, opt Options, replicas, corpusBytes int) (model.Memory, error) {
	m, err := model.EstimateMemory(cfg, opt.Batch/max(1, replicas), model.Train, model.Eval)
	if err != nil {
		return model.Memory{}, err
	}
	return m.AddData(corpusBytes), nil
}
