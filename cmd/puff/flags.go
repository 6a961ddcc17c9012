package main

import (
	"embed"
	"fmt"
	"math"
	"strings"

	"github.com/pufferfish-privacy/pufferfish/epsilon"
	"github.com/pufferfish-privacy/pufferfish/internal/checks"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/ratexpr"
)

// newEps is every command's --epsilon, in one syntax: a decimal (0.5), a
// fraction (1/2) or ln(r) for a rational r > 1 (e^ε = r exactly), with
// 0 < ε ≤ 700 (e^ε finite), read by package epsilon as the service and
// the pipeline read it. Unset, Float is NaN.
func newEps(def string) *epsilon.Flag { return epsilon.NewFlag(def) }

// probFlag is a probability flag (θ, a flip): a decimal or a fraction in
// [0, 1]. Unset, Float is NaN.
type probFlag struct {
	v    float64
	text string
}

func newProb() *probFlag { return &probFlag{v: math.NaN()} }

func (f *probFlag) String() string { return f.text }

func (f *probFlag) Set(s string) error {
	r, err := ratexpr.Eval(strings.TrimSpace(s), nil)
	if err != nil {
		return err
	}
	v, _ := r.Float64()
	if err := checks.Probability(fmt.Sprintf("%q", s), v); err != nil {
		return err
	}
	f.v, f.text = v, s
	return nil
}

func (f *probFlag) Type() string { return "p" }

// Float is the probability (NaN when not given).
func (f *probFlag) Float() float64 { return f.v }

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
