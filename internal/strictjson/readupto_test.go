package strictjson

import (
	"strings"
	"testing"
)

func TestReadUpTo(t *testing.T) {
	if b, over, err := ReadUpTo(strings.NewReader("abcd"), "x", 4); err != nil || over || string(b) != "abcd" {
		t.Fatalf("4 of 4: %q %v %v", b, over, err)
	}
	if b, over, err := ReadUpTo(strings.NewReader("abcde"), "x", 4); err != nil || !over || b != nil {
		t.Fatalf("5 of 4: %q %v %v", b, over, err)
	}
}
