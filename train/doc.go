// Package train holds the parts of training that do not need the model
// graph: the Adam/AdamW optimizer with checkpointable state, global-norm
// gradient clipping, learning-rate schedules, the metrics.jsonl log and the
// stability figures of a run.
//
// The optimizer and clipping are generic over float32 and float64 and work in
// place on the caller's value and gradient slices (for Gorgonia, the backing
// slices of the bound *tensor.Dense weights and their gradients), with no
// allocation per step.
package train
