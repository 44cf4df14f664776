package data

import (
	"bytes"
	"strings"
	"testing"
)

func TestSplitCorpusPartsByPosition(t *testing.T) {
	text := []byte(strings.Repeat("abcdefghij", 10) + "Z") // 101 bytes; Z only in the test part
	c, err := splitCorpus("x", "/tmp/x", text, DefaultSplit(), "file x")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Train) != 90 || len(c.Valid) != 5 || len(c.Test) != 6 {
		t.Fatalf("parts of 101 bytes = %d, %d, %d; want 90, 5, 6", len(c.Train), len(c.Valid), len(c.Test))
	}
	joined := append(append(append([]byte{}, c.Train...), c.Valid...), c.Test...)
	if !bytes.Equal(joined, text) {
		t.Fatal("train+valid+test is not the text in order")
	}
	if !c.Vocab.Contains('Z') || c.Vocab.Size() != 11 {
		t.Fatalf("vocabulary %q must hold the bytes of every part", c.Vocab.Bytes())
	}
	for _, want := range []string{"file x", "0.9,0.05,0.05", "[0, 90)", "[90, 95)", "[95, 101)"} {
		if !strings.Contains(c.Note, want) {
			t.Errorf("Note %q does not contain %q", c.Note, want)
		}
	}
	// Appending to a part must not overwrite the next one.
	_ = append(c.Train, '!')
	if c.Valid[0] != text[90] {
		t.Fatal("appending to Train overwrote Valid")
	}
}

func TestSplitCorpusTooShort(t *testing.T) {
	_, err := splitCorpus("tiny", "/tmp/tiny", []byte("0123456789"), DefaultSplit(), "file tiny")
	if err == nil {
		t.Fatal("a 10-byte file split 0.9,0.05,0.05 was accepted; its valid part is empty")
	}
	for _, want := range []string{"/tmp/tiny", "10 bytes", "valid part would have 0 byte(s)", "at least 2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if _, err := splitCorpus("ok", "/tmp/ok", make([]byte, 40), DefaultSplit(), "file ok"); err != nil {
		t.Errorf("40 bytes split 36/2/2 was rejected: %v", err)
	}
}

func TestSplitTrainValidAsNanoGPT(t *testing.T) {
	text := bytes.Repeat([]byte("x"), 1_115_394)
	c, err := splitTrainValid("shakespeare", "/tmp/s", text, "Tiny Shakespeare")
	if err != nil {
		t.Fatal(err)
	}
	// nanoGPT: n = int(len(data) * 0.9) = int(1003854.6) = 1003854.
	if len(c.Train) != 1_003_854 || len(c.Valid) != 111_540 {
		t.Fatalf("parts = %d, %d; want 1003854, 111540", len(c.Train), len(c.Valid))
	}
	if &c.Test[0] != &c.Valid[0] || len(c.Test) != len(c.Valid) {
		t.Fatal("Test must be the valid part")
	}
	if !strings.Contains(c.Note, "no separate test part") {
		t.Errorf("Note %q must say there is no separate test part", c.Note)
	}
	if _, err := splitTrainValid("s", "/tmp/s", []byte("abc"), "s"); err == nil {
		t.Error("3 bytes split 90/10 was accepted; its valid part has 1 byte")
	}
}

// TestValidIsTest: Tiny Shakespeare's split has no separate test part and says so; a
// split by fractions has one, even when its test bytes equal its validation bytes.
func TestValidIsTest(t *testing.T) {
	text := []byte(strings.Repeat("ab", 500))
	tv, err := splitTrainValid("shakespeare", "input.txt", text, "test")
	if err != nil {
		t.Fatal(err)
	}
	three, err := splitCorpus("f", "f.txt", text, DefaultSplit(), "test")
	if err != nil {
		t.Fatal(err)
	}
	if !tv.ValidIsTest() || three.ValidIsTest() || string(three.Valid) != string(three.Test) {
		t.Errorf("ValidIsTest: %v for the two-part split, %v for three parts of equal bytes; want true, false", tv.ValidIsTest(), three.ValidIsTest())
	}
}
