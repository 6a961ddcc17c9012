package main

import (
	"strings"
	"testing"
	"time"
)

// Issue 39: puff verify check examples/flu_hmm.json --length 5000 (a
// minute and 265 MB) is refused at once naming --max-work, with nothing
// printed; raised past it, --max-memory refuses it, and --timeout stops a
// longer one within a second or so of the deadline. puff verify loss and
// sweep take the same flags.
func TestVerifyLimits(t *testing.T) {
	model := "../../examples/flu_hmm.json"
	start := time.Now()
	out, err := run("verify", "check", model, "--epsilon", "ln(3)", "--length", "5000")
	if err == nil || !strings.Contains(err.Error(), "--max-work") || out != "" {
		t.Fatalf("length 5000: %v\n%s", err, out)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("refused after %v", d)
	}
	out, err = run("verify", "check", model, "--epsilon", "ln(3)", "--length", "5000", "--max-work", "1e15", "--max-memory", "50")
	if err == nil || !strings.Contains(err.Error(), "--max-memory") || out != "" {
		t.Fatalf("length 5000 at --max-memory 50: %v\n%s", err, out)
	}
	start = time.Now()
	out, err = run("verify", "check", model, "--epsilon", "ln(3)", "--length", "10000", "--max-work", "1e15", "--timeout", "1s")
	if err == nil || !strings.Contains(err.Error(), "--timeout") || out != "" {
		t.Fatalf("length 10000 past --timeout 1s: %v\n%s", err, out)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("stopped %v after a --timeout of 1s", d)
	}
	if _, err := run("verify", "loss", model, "--length", "5000"); err == nil || !strings.Contains(err.Error(), "--max-work") {
		t.Fatalf("loss: %v", err)
	}
	if _, err := run("verify", "sweep", model, "--epsilon", "ln(2)", "--length", "2500", "--grid", "p=1/10:1/2:1/10"); err == nil || !strings.Contains(err.Error(), "--max-work") {
		t.Fatalf("sweep: %v", err)
	}
}
