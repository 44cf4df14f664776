package data

import "math/big"

// Canonical download addresses of the named corpora. [Options] can replace them.
const (
	// Enwik8URL serves enwik8.zip, a zip archive whose one member, enwik8, is
	// the first 10^8 bytes of the English Wikipedia XML dump of 2006-03-03
	// (the Hutter Prize corpus).
	Enwik8URL = "http://mattmahoney.net/dc/enwik8.zip"
	// ShakespeareURL serves Tiny Shakespeare, the corpus of karpathy/char-rnn
	// and of nanoGPT's shakespeare_char example.
	ShakespeareURL = "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt"
)

// enwik8Corpus describes enwik8 and its archive as published with the
// Hutter Prize.
func enwik8Corpus(url string) remoteCorpus {
	return remoteCorpus{
		file: checkedFile{
			name:   "enwik8",
			size:   100_000_000,
			sha256: "2b49720ec4d78c3c9fabaee6e4179a5e997302b3a70029f30f2d582218c024a8",
		},
		archive: &checkedFile{
			name:   "enwik8.zip",
			size:   36_445_475,
			sha256: "547994d9980ebed1288380d652999f38a14fe291a6247c157c3d33d4932534bc",
		},
		member:  "enwik8",
		url:     url,
		folders: []string{"enwik8"},
	}
}

// enwik8Origin describes the standard enwik8 split for [Corpus.Note].
const enwik8Origin = "enwik8, the standard split of Al-Rfou et al. (2018) and Transformer-XL (90M/5M/5M bytes)"

// enwik8Split is that split: 90,000,000 / 5,000,000 / 5,000,000 of 10^8 bytes.
func enwik8Split() Split {
	return Split{
		fractions: [3]*big.Rat{big.NewRat(9, 10), big.NewRat(1, 20), big.NewRat(1, 20)},
		text:      "0.9,0.05,0.05",
	}
}

// shakespeareCorpus describes Tiny Shakespeare. Its local name follows the
// layout of char-rnn's repository, so a copy of that folder works as is.
func shakespeareCorpus(url string) remoteCorpus {
	return remoteCorpus{
		file: checkedFile{
			name:   "tinyshakespeare/input.txt",
			size:   1_115_394,
			sha256: "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed",
		},
		url: url,
	}
}

// shakespeareOrigin describes Tiny Shakespeare for [Corpus.Note].
const shakespeareOrigin = "Tiny Shakespeare (karpathy/char-rnn)"
