package ledger

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
)

// Line is the dataset's state on one line: what puff ledger init and a
// release against the ledger print.
func (s State) Line() string {
	if s.Err != nil {
		return fmt.Sprintf("dataset %q: %v", s.Dataset, s.Err)
	}
	return fmt.Sprintf("dataset %q: spent ε = %s of %s (remaining %s) by %s, %d releases", s.Dataset, Decimal(s.Spent.Epsilon), Decimal(s.Budget), DecimalDown(s.Remaining()), s.Spent.Rule, s.Releases)
}

// States are several datasets' states (what puff ledger import prints).
type States []State

// WriteText writes each state's Line.
func (ss States) WriteText(w io.Writer) error {
	for _, s := range ss {
		if _, err := fmt.Fprintln(w, s.Line()); err != nil {
			return err
		}
	}
	return nil
}

// Listing is what puff ledger show prints: every dataset's state, or one
// dataset's state with its releases (without their segments).
type Listing struct {
	Datasets []State // every dataset, when no one dataset was asked for
	Dataset  *State  // the one dataset asked for
	Releases []Brief // its releases
}

// List reads the listing of one dataset, or of all with dataset "".
func List(ctx context.Context, s Store, dataset string) (*Listing, error) {
	if dataset == "" {
		sts, err := s.Datasets(ctx)
		if sts == nil {
			sts = []State{}
		}
		return &Listing{Datasets: sts}, err
	}
	st, err := s.Dataset(ctx, dataset)
	if err != nil {
		return nil, err
	}
	es, err := s.Entries(ctx, dataset)
	if err != nil {
		return nil, err
	}
	l := &Listing{Dataset: &st, Releases: []Brief{}}
	for _, e := range es {
		l.Releases = append(l.Releases, e.Brief(false))
	}
	return l, nil
}

// MarshalJSON writes {"datasets": [...]}, or {"dataset": {...},
// "releases": [...]} for one dataset.
func (l *Listing) MarshalJSON() ([]byte, error) {
	if l.Dataset == nil {
		return json.Marshal(map[string]any{"datasets": l.Datasets})
	}
	return json.Marshal(map[string]any{"dataset": l.Dataset, "releases": l.Releases})
}

// WriteText prints the listing as tables.
func (l *Listing) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if l.Dataset == nil {
		fmt.Fprintln(tw, "dataset\tbudget\tspent\tremaining\treleases\trule")
		for _, st := range l.Datasets {
			if st.Err != nil {
				fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t%v\n", st.Dataset, st.Err)
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", st.Dataset, Decimal(st.Budget), Decimal(st.Spent.Epsilon), DecimalDown(st.Remaining()), st.Releases, st.Spent.Rule)
		}
		return tw.Flush()
	}
	fmt.Fprintln(w, l.Dataset.Line())
	if l.Dataset.ClassHash != "" {
		fmt.Fprintf(w, "class Θ: %s\n", l.Dataset.ClassHash)
	}
	fmt.Fprintln(tw, "id\ttime (UTC)\tmechanism\tε\tquery\tsegments\ttotal after\trule")
	for _, b := range l.Releases {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", b.ID, b.Time.Format("2006-01-02 15:04:05"), b.Mechanism, fmtFloat(b.Epsilon), b.Query, b.Segments, b.Spent, b.Rule)
	}
	return tw.Flush()
}

// Export writes every recorded release of a dataset (of all, with dataset
// "") as CSV with a header, or with asJSON as JSON lines, one Entry each
// with its record and noisy result (puff ledger export).
func Export(ctx context.Context, s Store, w io.Writer, dataset string, asJSON bool) error {
	names := []string{dataset}
	var bad []error
	if dataset == "" {
		sts, err := s.Datasets(ctx)
		if err != nil {
			return err
		}
		names = names[:0]
		for _, st := range sts {
			if st.Err != nil {
				bad = append(bad, st.Err) // the others are exported first
				continue
			}
			names = append(names, st.Dataset)
		}
	}
	cw := csv.NewWriter(w)
	if !asJSON {
		cw.Write([]string{"id", "dataset", "time", "token", "mechanism", "epsilon", "query", "segments", "series", "spent", "rule"})
	}
	enc := json.NewEncoder(w)
	for _, n := range names {
		es, err := s.Entries(ctx, n)
		if err != nil {
			return err
		}
		for _, e := range es {
			if asJSON {
				if err := enc.Encode(e); err != nil {
					return err
				}
				continue
			}
			cw.Write([]string{strconv.FormatInt(e.ID, 10), e.Dataset, e.Time.Format("2006-01-02T15:04:05.000000Z07:00"), e.Token, string(e.Record.Mechanism),
				fmtFloat(e.Record.Epsilon), e.Record.QueryName(), strconv.Itoa(len(e.Record.Segments)), strconv.Itoa(e.Record.SeriesCount()), e.Spent.String(), e.Rule})
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return errors.Join(bad...)
}
