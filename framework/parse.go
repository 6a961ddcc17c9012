package framework

import (
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"strings"

	"github.com/pufferfish-privacy/pufferfish/bn"
	"github.com/pufferfish-privacy/pufferfish/internal/strictjson"
	"github.com/pufferfish-privacy/pufferfish/ratexpr"
)

// File is the JSON framework format (README "Pufferfish frameworks"):
//
//	{
//	  "records": 4,                      // or "names": ["Ann", "Bob", ...]
//	  "domain": [0, 1],
//	  "query": "sum",                    // "histogram", {"count": 1}
//	  "thetas": [
//	    {"name": "clique", "joint": [[[0,0,0,0], "1/10"], [[1,0,0,0], 0.05], ...]},
//	    {"name": "chain", "network": [
//	       {"name": "X1", "cpt": [["1/2", "1/2"]]},
//	       {"name": "X2", "parents": ["X1"], "cpt": [[0.9, 0.1], [0.2, 0.8]]}, ...]}
//	  ],
//	  "pairs": [{"record": "Ann", "values": [0, 1]}],   // optional; default all
//	  "data": [0, 1, 1, 0]                             // optional database to release
//	}
//
// A joint lists assignments (domain values, one per record) with their
// probabilities; unlisted assignments have probability zero and the listed
// ones must sum to exactly 1. A network lists one node per record, in record
// order, with CPT rows in mixed radix over the parents (first parent most
// significant). Probabilities are JSON numbers (read exactly as decimals) or
// strings holding fractions or expressions ("1/6", "1-1/5").
type File struct {
	Records *int              `json:"records"`
	Names   []string          `json:"names"`
	Domain  []json.RawMessage `json:"domain"`
	Query   json.RawMessage   `json:"query"`
	Thetas  []FileTheta       `json:"thetas"`
	Pairs   []FilePair        `json:"pairs"`
	Data    []json.RawMessage `json:"data"`
}

// FileTheta is one distribution: "joint" or "network".
type FileTheta struct {
	Name    string            `json:"name"`
	Joint   []json.RawMessage `json:"joint"`
	Network []bn.FileNode     `json:"network"`
}

// FilePair restricts the secret pairs: a record (name or 1-based index) and
// two domain values.
type FilePair struct {
	Record json.RawMessage   `json:"record"`
	Values []json.RawMessage `json:"values"`
}

// Parse reads a framework file (name is used in error messages) and returns
// the framework and the optional database it carries (value indices, nil when
// absent). Unknown fields are errors.
func Parse(r io.Reader, name string) (*Framework, []int, error) {
	return parse(r, name, true)
}

func parse(r io.Reader, name string, expand bool) (*Framework, []int, error) {
	raw, err := strictjson.ReadAll(r, name)
	if err != nil {
		return nil, nil, err
	}
	var fl File
	if err := strictjson.Decode(raw, name, &fl); err != nil {
		return nil, nil, err
	}
	return fl.Build(name, expand)
}

// ParseNetworks is Parse for files whose thetas are all Bayesian networks,
// which are kept as networks instead of being expanded into joint tables
// (see NewNetworks).
func ParseNetworks(r io.Reader, name string) (*Framework, []int, error) {
	return parse(r, name, false)
}

// Build validates a decoded file; expand selects New (networks expanded into
// joint tables) or NewNetworks (networks only, kept as they are).
func (fl *File) Build(name string, expand bool) (*Framework, []int, error) {
	b := &fileBuilder{name: name}
	if len(fl.Domain) < 2 {
		return nil, nil, b.errf("domain: need at least two values")
	}
	b.domain = make([]*big.Rat, len(fl.Domain))
	for i, raw := range fl.Domain {
		v, err := ratexpr.JSON(raw, nil)
		if err != nil {
			return nil, nil, b.errf("domain[%d]: %v", i, err)
		}
		b.domain[i] = v
	}
	n, names, err := fl.records(b)
	if err != nil {
		return nil, nil, err
	}
	q, err := parseQuery(fl.Query, b.domain, b.value)
	if err != nil {
		return nil, nil, b.errf("query: %v", err)
	}
	var thetas []Theta
	for t, th := range fl.Thetas {
		theta, err := b.theta(t, th, n)
		if err != nil {
			return nil, nil, err
		}
		thetas = append(thetas, theta)
	}
	pairs, err := b.pairs(fl.Pairs, names)
	if err != nil {
		return nil, nil, err
	}
	var f *Framework
	if expand {
		f, err = New(names, b.domain, thetas, pairs, q)
	} else {
		f, err = NewNetworks(names, b.domain, thetas, pairs, q)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	data, err := b.data(fl.Data, n)
	if err != nil {
		return nil, nil, err
	}
	return f, data, nil
}

// fileBuilder holds what Build has read so far: the file's name (for
// errors) and the domain.
type fileBuilder struct {
	name   string
	domain []*big.Rat
}

// errf is an error prefixed with the file's name.
func (b *fileBuilder) errf(format string, a ...any) error {
	return fmt.Errorf("%s: "+format, append([]any{b.name}, a...)...)
}

// value returns the index in the domain of a JSON domain value.
func (b *fileBuilder) value(raw json.RawMessage) (int, error) {
	v, err := ratexpr.JSON(raw, nil)
	if err != nil {
		return 0, err
	}
	for i, d := range b.domain {
		if d.Cmp(v) == 0 {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%s is not in the domain", v.RatString())
}

// records returns the number of records and their names: from records,
// names or the first network, named X1, X2, ... unless names or a network
// of the right size names them.
func (fl *File) records(b *fileBuilder) (int, []string, error) {
	n := 0
	switch {
	case fl.Records != nil:
		n = *fl.Records
		if fl.Names != nil && len(fl.Names) != n {
			return 0, nil, b.errf("records is %d but names lists %d", n, len(fl.Names))
		}
	case fl.Names != nil:
		n = len(fl.Names)
	default:
		for _, th := range fl.Thetas {
			if th.Network != nil {
				n = len(th.Network)
				break
			}
		}
	}
	if n < 1 {
		return 0, nil, b.errf("records: give the number of records (or names, or a network)")
	}
	names := fl.Names
	if names == nil {
		names = make([]string, n)
		for i := range names {
			names[i] = fmt.Sprintf("X%d", i+1)
		}
		for _, th := range fl.Thetas {
			if len(th.Network) == n {
				for i, nd := range th.Network {
					if nd.Name != "" {
						names[i] = nd.Name
					}
				}
				break
			}
		}
	}
	return n, names, nil
}

// theta reads thetas[t], a joint table or a network over n records.
func (b *fileBuilder) theta(t int, th FileTheta, n int) (Theta, error) {
	where := fmt.Sprintf("thetas[%d]", t)
	if th.Name != "" {
		where += " (" + th.Name + ")"
	}
	switch {
	case th.Joint != nil && th.Network != nil:
		return Theta{}, b.errf("%s: give either joint or network, not both", where)
	case th.Network != nil:
		if len(th.Network) != n {
			return Theta{}, b.errf("%s: network has %d nodes, want one per record (%d)", where, len(th.Network), n)
		}
		net, err := bn.FromFile(len(b.domain), th.Network, where)
		if err != nil {
			return Theta{}, fmt.Errorf("%s: %w", b.name, err)
		}
		return Theta{Name: th.Name, Net: net}, nil
	case th.Joint != nil:
		var atoms []Atom
		for a, entry := range th.Joint {
			atom, err := b.atom(where, a, entry, n)
			if err != nil {
				return Theta{}, err
			}
			atoms = append(atoms, atom)
		}
		return Theta{Name: th.Name, Atoms: atoms}, nil
	default:
		return Theta{}, b.errf("%s: give a joint table or a network", where)
	}
}

// atom reads joint[a] of the theta at where: [[values...], probability].
func (b *fileBuilder) atom(where string, a int, entry json.RawMessage, n int) (Atom, error) {
	var pair []json.RawMessage
	if err := json.Unmarshal(entry, &pair); err != nil || len(pair) != 2 {
		return Atom{}, b.errf("%s: joint[%d]: want [[values...], probability]", where, a)
	}
	var vals []json.RawMessage
	if err := json.Unmarshal(pair[0], &vals); err != nil {
		return Atom{}, b.errf("%s: joint[%d]: the assignment must be a list of domain values", where, a)
	}
	if len(vals) != n {
		return Atom{}, b.errf("%s: joint[%d]: assignment has %d values, want %d", where, a, len(vals), n)
	}
	x := make([]int, n)
	var err error
	for i, raw := range vals {
		if x[i], err = b.value(raw); err != nil {
			return Atom{}, b.errf("%s: joint[%d] record %d: %v", where, a, i+1, err)
		}
	}
	p, err := ratexpr.JSON(pair[1], nil)
	if err != nil {
		return Atom{}, b.errf("%s: joint[%d]: probability: %v", where, a, err)
	}
	return Atom{X: x, P: p}, nil
}

// pairs reads the optional secret pairs (nil when absent, so the default
// of all pairs applies; empty when given empty).
func (b *fileBuilder) pairs(fps []FilePair, names []string) ([]Pair, error) {
	if fps == nil {
		return nil, nil
	}
	pairs := []Pair{}
	for j, fp := range fps {
		rec, err := recordIndex(fp.Record, names)
		if err != nil {
			return nil, b.errf("pairs[%d]: %v", j, err)
		}
		if len(fp.Values) != 2 {
			return nil, b.errf("pairs[%d]: values must hold two domain values", j)
		}
		x, err := b.value(fp.Values[0])
		if err != nil {
			return nil, b.errf("pairs[%d]: %v", j, err)
		}
		y, err := b.value(fp.Values[1])
		if err != nil {
			return nil, b.errf("pairs[%d]: %v", j, err)
		}
		pairs = append(pairs, Pair{rec, x, y})
	}
	return pairs, nil
}

// data reads the optional database of n records (nil when absent).
func (b *fileBuilder) data(raws []json.RawMessage, n int) ([]int, error) {
	if raws == nil {
		return nil, nil
	}
	if len(raws) != n {
		return nil, b.errf("data has %d values, want one per record (%d)", len(raws), n)
	}
	data := make([]int, n)
	var err error
	for i, raw := range raws {
		if data[i], err = b.value(raw); err != nil {
			return nil, b.errf("data[%d]: %v", i, err)
		}
	}
	return data, nil
}

func parseQuery(raw json.RawMessage, domain []*big.Rat, value func(json.RawMessage) (int, error)) (Query, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return Sum(domain), nil
	}
	var name string
	if json.Unmarshal(raw, &name) == nil {
		switch name {
		case "sum":
			return Sum(domain), nil
		case "histogram":
			return Histogram(len(domain)), nil
		}
		return Query{}, fmt.Errorf("unknown query %q (want \"sum\", \"histogram\" or {\"count\": value})", name)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || len(obj) != 1 || obj["count"] == nil {
		return Query{}, fmt.Errorf("want \"sum\", \"histogram\" or {\"count\": value}")
	}
	a, err := value(obj["count"])
	if err != nil {
		return Query{}, err
	}
	return Count(a, domain[a].RatString()), nil
}

func recordIndex(raw json.RawMessage, names []string) (int, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		for i, nm := range names {
			if nm == s {
				return i, nil
			}
		}
		return 0, fmt.Errorf("unknown record %q", s)
	}
	var i int
	if err := json.Unmarshal(raw, &i); err != nil {
		return 0, fmt.Errorf("record must be a name or a 1-based index")
	}
	if i < 1 || i > len(names) {
		return 0, fmt.Errorf("record %d out of range 1..%d", i, len(names))
	}
	return i - 1, nil
}
