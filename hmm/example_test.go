package hmm_test

import (
	"fmt"
	"math/big"

	"github.com/pufferfish-privacy/pufferfish/hmm"
)

// Noisy Max over three queries with answers in {0, 1, 2} and ½-geometric
// noise, as differential privacy when one answer may change arbitrarily:
// the exact loss ln(25/7) exceeds the ln 2 that neighbours differing by
// one would give ([LWZ] Example 7.2's setting). The pairs are streamed; no
// HMM is built. (Ratio and witness agree with a direct enumeration of the
// noise.)
func ExampleNoisyMax() {
	d, err := hmm.NoisyMax(3, 2, big.NewRat(1, 2), hmm.ReturnIndex, hmm.DifferAnyhow)
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := d.Loss()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("ratio %s (loss %.4f): output %q under %s, larger under %s\n",
		r.Ratio.RatString(), r.Loss, d.Outputs[r.Witness[0]], r.Secret, r.Larger)
	// Output:
	// ratio 25/7 (loss 1.2730): output "index 2" under 102 vs 122, larger under tau
}

// A two-state chain (healthy, sick) observed through noisy symptoms: is
// "sick at the start" hidden within ε = ln 2 over every sequence of up to
// four observations? No: four fevers in a row are 58835/1703 ≈ 34.5 times
// likelier when sick (checked by a direct forward computation over all
// 120 sequences).
func ExampleCheck() {
	p, q := big.NewRat(1, 10), big.NewRat(9, 10)
	m := &hmm.Model{States: []string{"healthy", "sick"}, Obs: []string{"ok", "cough", "fever"},
		Trans: [][]hmm.Entry{{{To: 0, P: q}, {To: 1, P: p}}, {{To: 0, P: p}, {To: 1, P: q}}},
		Emit: [][]*big.Rat{{big.NewRat(6, 10), big.NewRat(3, 10), big.NewRat(1, 10)},
			{big.NewRat(2, 10), big.NewRat(3, 10), big.NewRat(5, 10)}}}
	sec := hmm.Secret{Name: "sick vs healthy", Pi: []*big.Rat{big.NewRat(0, 1), big.NewRat(1, 1)}, Tau: []*big.Rat{big.NewRat(1, 1), big.NewRat(0, 1)}}
	eps, _ := hmm.ParseEpsilon("ln(2)")
	v, r, err := hmm.Check(m, []hmm.Secret{sec}, 4, eps)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: loss ln(%s) = %.4f, witness %v (%s larger)\n", v, r.Ratio.RatString(), r.Loss, r.Witness, r.Larger)
	// Output:
	// violated: loss ln(58835/1703) = 3.5423, witness [2 2 2 2] (pi larger)
}
