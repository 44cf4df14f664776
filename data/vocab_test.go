package data

import (
	"bytes"
	"encoding"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestVocabSortedDistinctBytes(t *testing.T) {
	v := NewVocab([]byte("hello, world\n\xff\x00"))
	want := []byte("\x00\n ,dehlorw\xff")
	if got := v.Bytes(); !bytes.Equal(got, want) {
		t.Fatalf("Bytes() = %q, want %q", got, want)
	}
	if v.Size() != len(want) {
		t.Fatalf("Size() = %d, want %d", v.Size(), len(want))
	}
	for b := range 256 {
		if got, want := v.Contains(byte(b)), bytes.IndexByte(want, byte(b)) >= 0; got != want {
			t.Errorf("Contains(%#02x) = %v, want %v", b, got, want)
		}
	}
}

func TestVocabEncodeDecodeRoundTrip(t *testing.T) {
	text := []byte("abcab\x80a")
	v := NewVocab(text)
	ids, err := v.Encode(text)
	if err != nil {
		t.Fatal(err)
	}
	// Sorted bytes a b c \x80 get ids 0 1 2 3.
	wantIDs := []int{0, 1, 2, 0, 1, 3, 0}
	if !slices.Equal(ids, wantIDs) {
		t.Fatalf("Encode = %v, want %v", ids, wantIDs)
	}
	compact, err := v.EncodeCompact(text)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ids {
		if int(compact[i]) != ids[i] {
			t.Fatalf("EncodeCompact[%d] = %d, Encode gives %d", i, compact[i], ids[i])
		}
	}
	back, err := v.Decode(ids)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back, text) {
		t.Fatalf("Decode(Encode(x)) = %q, want %q", back, text)
	}
}

func TestVocabAllBytes(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(255 - i)
	}
	v := NewVocab(all)
	if v.Size() != 256 {
		t.Fatalf("Size() = %d, want 256", v.Size())
	}
	ids, err := v.EncodeCompact(all)
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		if int(id) != 255-i {
			t.Fatalf("id of byte %d = %d, want %d", all[i], id, 255-i)
		}
	}
}

func TestVocabEncodeUnknownByteNamesByteAndOffset(t *testing.T) {
	v := NewVocab([]byte("abc"))
	for _, encode := range []func([]byte) error{
		func(b []byte) error { _, err := v.Encode(b); return err },
		func(b []byte) error { _, err := v.EncodeCompact(b); return err },
	} {
		err := encode([]byte("abcaz"))
		if err == nil || !strings.Contains(err.Error(), "0x7a 'z'") || !strings.Contains(err.Error(), "offset 4") {
			t.Errorf("error = %v, want it to name byte 0x7a 'z' and offset 4", err)
		}
		err = encode([]byte("a\xc3"))
		if err == nil || !strings.Contains(err.Error(), "0xc3") || !strings.Contains(err.Error(), "offset 1") {
			t.Errorf("error = %v, want it to name byte 0xc3 and offset 1", err)
		}
	}
}

func TestVocabDecodeRejectsOutOfRangeIDs(t *testing.T) {
	v := NewVocab([]byte("abc"))
	for _, id := range []int{-1, 3, 1000} {
		_, err := v.Decode([]int{0, id})
		if err == nil || !strings.Contains(err.Error(), "offset 1") {
			t.Errorf("Decode id %d: error = %v, want an error naming offset 1", id, err)
		}
	}
}

func TestVocabFromBytes(t *testing.T) {
	v := NewVocab([]byte("the quick brown fox"))
	back, err := VocabFromBytes(v.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Bytes(), v.Bytes()) {
		t.Fatalf("round trip = %q, want %q", back.Bytes(), v.Bytes())
	}
	ids, err := back.Encode([]byte("fox"))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := v.Encode([]byte("fox"))
	if !slices.Equal(ids, want) {
		t.Fatalf("ids after round trip = %v, want %v", ids, want)
	}
	for _, bad := range []string{"", "ba", "abb"} {
		if _, err := VocabFromBytes([]byte(bad)); err == nil {
			t.Errorf("VocabFromBytes(%q) succeeded, want an error", bad)
		}
	}
}

func TestVocabBinaryMarshaling(t *testing.T) {
	v := NewVocab([]byte("zyx\x01"))
	var m encoding.BinaryMarshaler = v
	form, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back Vocab
	var u encoding.BinaryUnmarshaler = &back
	if err := u.UnmarshalBinary(form); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Bytes(), v.Bytes()) || !back.Contains('x') || back.Contains('a') {
		t.Fatalf("unmarshalled vocabulary %q, want %q", back.Bytes(), v.Bytes())
	}
	if err := back.UnmarshalBinary([]byte("ba")); err == nil {
		t.Fatal("UnmarshalBinary accepted unsorted bytes")
	}
}

func TestVocabJSON(t *testing.T) {
	type header struct {
		Vocab *Vocab `json:"vocab"`
	}
	v := NewVocab([]byte("\x00ab\xff"))
	text, err := json.Marshal(header{v})
	if err != nil {
		t.Fatal(err)
	}
	if string(text) != `{"vocab":[0,97,98,255]}` {
		t.Fatalf("JSON = %s", text)
	}
	var back header
	if err := json.Unmarshal(text, &back); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Vocab.Bytes(), v.Bytes()) {
		t.Fatalf("round trip = %q, want %q", back.Vocab.Bytes(), v.Bytes())
	}
	for _, bad := range []string{`{"vocab":[1,256]}`, `{"vocab":[2,1]}`, `{"vocab":"ab"}`, `{"vocab":[]}`} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("%s was accepted", bad)
		}
	}
}

func TestZeroVocabIsEmpty(t *testing.T) {
	var v Vocab
	if v.Size() != 0 || v.Contains(0) {
		t.Fatalf("zero Vocab: Size %d, Contains(0) %v; want empty", v.Size(), v.Contains(0))
	}
	if _, err := v.Encode([]byte{0}); err == nil {
		t.Fatal("zero Vocab encoded byte 0")
	}
}
