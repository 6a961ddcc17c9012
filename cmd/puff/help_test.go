package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Every command has its long help (embedded help/*.txt, shared parts filled
// in) and --help prints it.
func TestEveryHelp(t *testing.T) {
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		for _, s := range c.Commands() {
			if s.Name() == "help" || s.Name() == "completion" {
				continue
			}
			n++
			if s.Long == "" || strings.Contains(s.Long, "{{") {
				t.Errorf("%s: long help %q", s.CommandPath(), s.Long)
			}
			walk(s)
		}
	}
	walk(root(nil))
	if n < 15 {
		t.Fatalf("only %d commands found", n)
	}
	out, err := run("wasserstein", "--help")
	if err != nil || !strings.Contains(out, "A framework file (JSON)") {
		t.Fatalf("wasserstein --help: %v\n%s", err, out)
	}
}
