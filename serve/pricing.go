package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/pufferfish-privacy/pufferfish/internal/strictjson"
	"github.com/pufferfish-privacy/pufferfish/ledger"
)

// lowerBecause says why a rule can price releases below the sum of their
// own ε (the page and the API's "pricing").
var lowerBecause = map[string]string{
	"dp-leakage":     "each release is (1/σ)-DP per reading, and the temporal leakage bound prices their combined per-reading guarantee at once, which is tighter than adding the releases' ε",
	"mqm-parallel":   "releases on different stretches of a series share the budget in parallel instead of adding up",
	"mqmapprox-far":  "releases far apart in time leak little about each other's secrets",
	"max-divergence": "the rule bounds the releases' combined divergence directly instead of adding their ε",
	"dp":             "the records are independent, so each record is charged only the releases that read it",
}

// pricing is the sum of a dataset's releases' own ε (each as the ledger
// charges it) and a sentence saying which rule prices the total and, when
// that is below the sum, why: a total that goes down when a tighter rule
// comes to apply is the same releases priced better, not a refund.
func pricing(st ledger.State, es []ledger.Entry) (json.Number, string) {
	sum := new(big.Rat)
	for _, e := range es {
		if c := e.Record.Charge(); c != nil {
			sum.Add(sum, c)
		}
	}
	if st.Spent.Epsilon == nil || st.Releases == 0 {
		return json.Number(ledger.Decimal(sum)), "nothing released yet: the total is 0"
	}
	text := fmt.Sprintf("total ε = %s priced by the %s rule", ledger.Decimal(st.Spent.Epsilon), st.Spent.Rule)
	if st.Spent.Theorem != "" {
		text += " (" + st.Spent.Theorem + ")"
	}
	switch c := st.Spent.Epsilon.Cmp(sum); {
	case c < 0 && len(es) > 1:
		why, ok := lowerBecause[st.Spent.Rule]
		if !ok {
			why = "the rule bounds all the releases together more tightly than adding their ε"
		}
		text += fmt.Sprintf(" — lower than the sum of the individual releases' ε, %s, because %s. This is not a refund: every release stays recorded and charged, and the rule prices them all together; it applies to these releases as they are, and a later release may be priced by another rule", ledger.Decimal(sum), why)
	case c > 0:
		text += fmt.Sprintf(" — more than the sum of the individual releases' ε, %s: no rule that adds them up covers these releases", ledger.Decimal(sum))
	}
	return json.Number(ledger.Decimal(sum)), text
}

// withPricing is a dataset's ledger state as JSON with its pricing
// ("sum_of_releases", "pricing"): of the entries es, or, with upTo > 0,
// of the stored entries up to release upTo (the state recorded with it,
// a replay's too); without them when the entries cannot be read (the
// state is still right).
func (s *Server) withPricing(ctx context.Context, st ledger.State, es []ledger.Entry, upTo int64) json.RawMessage {
	body := mustJSON(st)
	if upTo > 0 {
		all, err := s.cfg.Store.Entries(ctx, st.Dataset)
		if err != nil {
			return body
		}
		es = nil
		for _, e := range all {
			if e.ID <= upTo {
				es = append(es, e)
			}
		}
	}
	sum, text := pricing(st, es)
	return strictjson.AddField(strictjson.AddField(body, "sum_of_releases", sum), "pricing", text)
}
