// Package model is lipformer's byte-level transformer language model: its configuration
// (saved in every checkpoint), its parameters, the graphs built from them for training,
// evaluation and sampling, and the incremental Decoder (a key/value cache) with which
// Generate samples: beyond the context, window Shift (the default) or Slide.
package model

import "lipformer/spec"

// Config is the model's specification (spec.Model), saved inside every checkpoint.
type Config = spec.Model

// Default is spec.Default: a small pre-LN L2 model.
func Default() Config { return spec.Default() }
