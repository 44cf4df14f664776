// Package bench measures lipformer's programs on the reference configurations
// (model.Presets): a training step (train.Stepper, the trainer's code path), a
// forward-only evaluation program and sampling (model.GenerateBatch with the decoder's
// key/value cache), timed over a fixed number of runs with their allocations and live
// heap (Measure), or over many training steps watching the live heap (Soak). It also
// writes the checkpoints that bench/torch_ref.py, the PyTorch reference of the model,
// reads, runs the script, and compares its losses and times with Go's (Torch).
package bench
