//go:build ignore

// gen writes activity.csv, the built-in example: 10 people, 8 hours each of
// one-minute activity labels from a four-state Markov chain, with a
// 30-minute recording gap for person p03 (missing readings the chain runs
// through: the series is never split).
// Run: go run gen.go > activity.csv
package main

import (
	"fmt"
	"math/rand/v2"
)

var states = []string{"sleep", "sit", "walk", "run"}

var P = [][]float64{
	{0.90, 0.08, 0.01, 0.01},
	{0.03, 0.85, 0.10, 0.02},
	{0.01, 0.20, 0.70, 0.09},
	{0.01, 0.05, 0.24, 0.70},
}

func main() {
	rng := rand.New(rand.NewPCG(2016, 1)) // deterministic example
	fmt.Println("series,time,state")
	for p := 1; p <= 10; p++ {
		x := rng.IntN(4)
		for t := 0; t < 480; t++ {
			if p == 3 && t >= 200 && t < 230 {
				continue // device off
			}
			fmt.Printf("p%02d,%d,%s\n", p, t, states[x])
			u, acc := rng.Float64(), 0.0
			for y, q := range P[x] {
				acc += q
				if u < acc {
					x = y
					break
				}
			}
		}
	}
}
