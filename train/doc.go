// Package train trains and scores the models of package model: a training run (Run)
// that compiles the model's training and evaluation programs and drives them step by step
// (Stepper), the run directory it writes and resumes (RunDir: checkpoints, the
// metrics.jsonl log, the summary, the lock), evaluation in bits per byte and attention
// ablation, and the pieces of a step that work on plain slices: the Adam/AdamW optimizer
// with checkpointable state, global-norm gradient clipping, learning-rate schedules and
// the stability figures of a run.
//
// The optimizer and clipping are generic over float32 and float64 and work in place on
// the caller's value and gradient slices (for Gorgonia, the backing slices of the bound
// *tensor.Dense weights and their gradients), with no allocation per step.
package train
