package cli

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestInts(t *testing.T) {
	got, err := Ints("-n", "2, 8,32")
	if err != nil || !slices.Equal(got, []int{2, 8, 32}) {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, bad := range []string{"2,x", "0", "-3", ""} {
		if _, err := Ints("-n", bad); err == nil || !strings.Contains(err.Error(), "-n") {
			t.Errorf("%q: error %v, want one naming -n", bad, err)
		}
	}
}

func TestBarOnlyOnATerminal(t *testing.T) {
	if b := Bar(&bytes.Buffer{}, 10, "items"); b != nil {
		t.Error("a progress bar was drawn on a buffer")
	}
}
