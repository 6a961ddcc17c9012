package release

import (
	"bytes"
	_ "embed"
	"io"
)

//go:embed example/activity.csv
var exampleData []byte

//go:embed example/activity_class.json
var exampleClass []byte

// ExampleData returns the built-in example dataset: 10 people × 8 hours of
// one-minute activity labels (sleep, sit, walk, run) drawn from a Markov
// chain by example/gen.go, long format series,time,state, with a 30-minute
// gap in series p03.
func ExampleData() io.Reader { return bytes.NewReader(exampleData) }

// ExampleClass returns the class file for the example: two activity chains
// (the generating one and a perturbed one), every initial distribution.
func ExampleClass() io.Reader { return bytes.NewReader(exampleClass) }
