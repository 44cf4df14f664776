// Package data provides the byte-level corpora that lipformer trains and
// evaluates on, and the batches that feed the model.
//
// A [Corpus] is a named byte string split by position into train, valid and
// test parts, with the [Vocab] of its distinct bytes. [Load] resolves the
// corpus named by a -data flag: "enwik8" and "shakespeare" are found in (or
// downloaded to) a data directory and verified by size and SHA-256, "" is a
// real English text that ships with the Go toolchain, and anything else is the
// path of a file. Every corpus records the size and SHA-256 of its bytes.
// [Fetch] is the verified, atomic downloader behind it.
//
// [Sampler] draws random training windows that are a pure function of a seed
// and a step number, so that training can resume exactly without saving
// random state. [EvalWindows] tiles a split with non-overlapping windows so
// that every byte but the first is scored exactly once.
package data
