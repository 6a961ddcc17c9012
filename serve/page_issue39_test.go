package serve

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// Issue 39, items 4 and 5, the page: a token that may only read a
// dataset sees its Release form disabled with the reason (and enabled on
// a dataset it may release on); a total re-priced below the sum of the
// releases' ε by a tighter rule says which rule and why, the ledger's
// chart draws the sum beside it, and the row where it dropped says it is
// not a refund.
func TestReadOnlyFormAndRepricingInBrowser(t *testing.T) {
	needBrowser(t)
	f := newFixture(t, "")
	registerBig(t, f, "big")
	for _, body := range []string{`{"method": "groupdp", "epsilon": 40}`, `{"method": "exact", "epsilon": 0.1, "window": "24h"}`} {
		if code, m, _ := f.do("POST", "/v1/datasets/big/releases", f.admin, body); code != 201 {
			t.Fatalf("%d %v", code, m)
		}
	}
	tok := f.mk("read:activity", "release:big")
	b := openBrowser(t, f.dir)
	b.step("open the page", chromedp.Navigate(f.srv.URL), chromedp.WaitVisible(chromedp.ID("token")))
	b.step("sign in", chromedp.SendKeys(chromedp.ID("token"), tok), chromedp.Click(chromedp.ID("login")))
	b.waitFor(`document.querySelector('.ds.selected[data-name="activity"]') ? 'ok' : ''`, "activity selected")
	if got := b.eval(`String(document.querySelector('#release-fields').disabled) + '|' + document.querySelector('#release-note').textContent`); !strings.HasPrefix(got, "true|") || !strings.Contains(got, "release:activity") {
		t.Errorf("a read-only dataset's Release form: %q, want disabled with the reason", got)
	}
	b.step("select big", chromedp.SetValue(chromedp.ID("dataset"), "big"))
	b.eval(`document.querySelector('#dataset').dispatchEvent(new Event('change')), ''`)
	b.waitFor(`document.querySelector('.ds.selected[data-name="big"]') ? 'ok' : ''`, "big selected")
	if got := b.eval(`String(document.querySelector('#release-fields').disabled) + '|' + document.querySelector('#release-note').textContent`); got != "false|" {
		t.Errorf("a releasable dataset's Release form: %q, want enabled", got)
	}
	// the note of big's ledger, not the one activity's (empty) ledger
	// showed before the page fetched big's
	note := b.waitFor(`(t => t.includes('40.1') ? t : '')(document.querySelector('#ledger-pricing').textContent)`, "big's ledger pricing note")
	for _, want := range []string{"dp-leakage", "lower than the sum of the individual releases' ε, 40.1", "not a refund"} {
		if !strings.Contains(note, want) {
			t.Errorf("the ledger's note %q does not say %q", note, want)
		}
	}
	b.waitFor(`(p => p && p.querySelector('svg path') && p.textContent.includes("sum of the releases") ? 'ok' : '')(document.querySelector('#ledger-plot'))`, "big's ledger plot")
	checkChart(t, "ledger", b.eval(chartFactsJS+`(document.querySelector('#ledger-plot svg').id = 'ledger-svg')`), false, []string{"cumulative ε", "sum of the releases' ε", "budget"})
	if row := b.eval(`(r => r ? r.title : '')(document.querySelector('#ledger-table tr.repriced'))`); !strings.Contains(row, "not a refund") {
		t.Errorf("the re-priced row: %q", row)
	}
}
