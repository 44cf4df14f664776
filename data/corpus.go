package data

import (
	"fmt"
	"math/big"
)

// Corpus is a named byte string split by position into train, valid and test
// parts, with the vocabulary of all its bytes.
type Corpus struct {
	// Name is the -data value that loads the corpus again: "enwik8",
	// "shakespeare", "opticks" (the default), or the path of a file.
	Name string
	// Path is the file the bytes were read from.
	Path string
	// Train, Valid and Test are the parts, in this order in the file. They
	// share the memory of the file's bytes; Test may be the same slice as
	// Valid when the corpus has no separate test part (see Note).
	Train, Valid, Test []byte
	// Vocab holds the distinct bytes of the whole corpus, all parts included.
	Vocab *Vocab
	// Note says in words how the parts were made, with their byte ranges.
	Note string
	// Size and SHA256 identify the bytes read from Path: their number and
	// their SHA-256 in lower-case hex. A run stores them to tell its corpus
	// from another text, the same bytes in another order included.
	Size   int
	SHA256 string
	// Dir is the data directory a named corpus (enwik8, shakespeare) was
	// looked for in, as [Options.Dir] or [DefaultDir] gave it; "" for a file
	// and for the default corpus.
	Dir string
}

// minPartLen is the shortest usable part: two bytes, one of them a scored target.
const minPartLen = 2

// splitCorpus cuts text into three parts by the fractions of s.
func splitCorpus(name, path string, text []byte, s Split, origin string) (*Corpus, error) {
	trainLen, validLen, testLen := s.Cut(len(text))
	if err := checkParts(name, path, len(text), s.String(), trainLen, validLen, testLen); err != nil {
		return nil, err
	}
	validEnd := trainLen + validLen
	note := fmt.Sprintf("%s: split by position with fractions %s: train = bytes [0, %d), valid = [%d, %d), test = [%d, %d)",
		origin, s, trainLen, trainLen, validEnd, validEnd, len(text))
	return &Corpus{
		Name:  name,
		Path:  path,
		Train: text[:trainLen:trainLen],
		Valid: text[trainLen:validEnd:validEnd],
		Test:  text[validEnd:],
		Vocab: NewVocab(text),
		Note:  note,
		Size:  len(text),
	}, nil
}

// splitTrainValid cuts text into a train part, the first floor(90%) of the
// bytes as nanoGPT does, and a valid part, the rest, which also serves as
// the test part.
func splitTrainValid(name, path string, text []byte, origin string) (*Corpus, error) {
	trainLen := floorTimes(len(text), big.NewRat(9, 10))
	validLen := len(text) - trainLen
	if err := checkParts(name, path, len(text), "0.9,0.1", trainLen, validLen); err != nil {
		return nil, err
	}
	note := fmt.Sprintf("%s: split by position as nanoGPT's shakespeare_char: train = the first 90%%, bytes [0, %d), valid = the last 10%%, [%d, %d); there is no separate test part: Test is the valid part",
		origin, trainLen, trainLen, len(text))
	valid := text[trainLen:]
	return &Corpus{
		Name:  name,
		Path:  path,
		Train: text[:trainLen:trainLen],
		Valid: valid,
		Test:  valid,
		Vocab: NewVocab(text),
		Note:  note,
		Size:  len(text),
	}, nil
}

// checkParts reports a part shorter than minPartLen bytes.
func checkParts(name, path string, total int, split string, lengths ...int) error {
	for i, n := range lengths {
		if n < minPartLen {
			return fmt.Errorf("data: corpus %q (%s) has %d bytes, too few for split %s: its %s part would have %d byte(s), need at least %d",
				name, path, total, split, partName(i), n, minPartLen)
		}
	}
	return nil
}

// ValidIsTest reports whether the test part is the validation part: a corpus without a
// separate test part (Tiny Shakespeare's split, see Note), whose test scores repeat the
// validation scores.
func (c *Corpus) ValidIsTest() bool {
	return len(c.Test) == len(c.Valid) && len(c.Test) > 0 && &c.Test[0] == &c.Valid[0]
}
