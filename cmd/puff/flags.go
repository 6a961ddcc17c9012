package main

import (
	"embed"
	"strings"

	"github.com/pufferfish-privacy/pufferfish/epsilon"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
)

// newEps is every command's --epsilon, in one syntax: a decimal (0.5), a
// fraction (1/2) or ln(r) for a rational r > 1 (e^ε = r exactly), with
// 0 < ε ≤ 700 (e^ε finite), read by package epsilon as the service and
// the pipeline read it. Unset, Float is NaN.
func newEps(def string) *epsilon.Flag { return epsilon.NewFlag(def) }

// newProb is a probability flag (θ, a flip): a decimal or a fraction in
// [0, 1]. Unset, Float is NaN.
func newProb() *epsilon.ProbFlag { return epsilon.NewProbFlag() }

// newMethod is --method: a release mechanism in the CLI's spelling.
func newMethod() *mechanism.Flag { return &mechanism.Flag{Name: mechanism.Exact} }

//go:embed help/*.txt
var helpFS embed.FS

// help returns a command's long help from help/NAME.txt, with the shared
// parts {{framework}} and {{model-file}} filled in.
func help(name string) string {
	read := func(n string) string {
		b, err := helpFS.ReadFile("help/" + n + ".txt")
		if err != nil {
			panic("puff: no help text " + n) // every command's text ships (TestEveryHelp)
		}
		return strings.TrimRight(string(b), "\n")
	}
	t := read(name)
	for _, part := range []string{"framework", "model-file"} {
		t = strings.ReplaceAll(t, "{{"+part+"}}", read(part))
	}
	return t
}
