// Package ledger is the durable privacy-budget ledger: datasets with a
// class Θ and a total budget, and every release made about them, in a
// database that several processes share. One interface, Store, has two
// implementations with the same schema migrations: SQLite (embedded, the
// default; modernc.org/sqlite, pure Go, WAL) and PostgreSQL (pgx v5).
//
// # Guarantee
//
// Store.Spend is the only way to release against a ledger. In one
// transaction, holding the dataset's lock, it composes the recorded
// releases with the new one by the rules of package compose ([SC17];
// docs/math.md §4.5) — through the dataset's running composition state,
// which the new record updates in time proportional to the series it
// touches, with the total compose.Records gives for all the records
// (docs/math.md §4.11) — and compares the composed ε with the budget exactly
// (guarantee.Rat: recorded ε are exact decimals, so ten releases of 0.1 fit
// a budget of 1). Over budget, it returns a *Refused error and draws
// nothing. Otherwise it calls draw — the only step that adds noise — and
// commits the record together with its noisy result before returning, so
// nothing is printed that is not recorded, and a crash leaves either the
// whole release or none of it.
package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pufferfish-privacy/pufferfish/guarantee"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/record"
)

// Store is a durable ledger.
type Store interface {
	// Init registers a dataset with its total budget and, optionally, its
	// class Θ (nil: set by the first release); an existing name wraps
	// ErrExists.
	Init(ctx context.Context, d Registration) error
	// Definition is how a dataset was registered (its class as set by now).
	Definition(ctx context.Context, name string) (Registration, error)
	// Datasets is the state of every dataset, by name.
	Datasets(ctx context.Context) ([]State, error)
	// Dataset is one dataset's state.
	Dataset(ctx context.Context, name string) (State, error)
	// Entries are a dataset's releases in the order they were committed.
	Entries(ctx context.Context, name string) ([]Entry, error)
	// Spend checks and records one release (see the package comment).
	Spend(ctx context.Context, s Spend, draw func() (json.RawMessage, error)) (Receipt, error)
	// CreateToken makes a bearer token with scopes (and, optionally, a
	// budget of its own inside each dataset's); it returns the secret,
	// which is stored only as a hash.
	CreateToken(ctx context.Context, scopes []string, budget *big.Rat) (secret string, t Token, err error)
	// RevokeToken revokes a token by id.
	RevokeToken(ctx context.Context, id string) error
	// Authenticate finds the live token of a secret (ErrBadToken otherwise).
	Authenticate(ctx context.Context, secret string) (Token, error)
	// Tokens lists every token (never a secret).
	Tokens(ctx context.Context) ([]Token, error)
	// Stream is a dataset's stream: its settings and running state.
	Stream(ctx context.Context, dataset string) (Stream, error)
	// AppendStream feeds a dataset's stream in one transaction: apply
	// reads the stream and returns its new state and the windows it
	// closes; they are stored together with the file's hash. A file
	// appended before (same hash) changes nothing: apply is not called
	// and Duplicate is set. A window is stored once: releasing one twice
	// is an error and nothing is stored.
	AppendStream(ctx context.Context, dataset, fileHash string, apply func(Stream) (state json.RawMessage, windows []StreamWindow, err error)) (Appended, error)
	// StreamWindows lists a stream's released windows in time order.
	StreamWindows(ctx context.Context, dataset string) ([]StreamWindow, error)
	Close() error
}

// Registration is a dataset as registered.
type Registration struct {
	Name   string
	Budget *big.Rat
	Class  *markov.Class   // nil: the first release's
	Source json.RawMessage // how a service reads its data (opaque to the ledger); nil from the CLI
	// Origin is the time of the chain's first step as the user wrote it
	// ("" : unknown): releases place their series after it
	// (docs/math.md §4.10).
	Origin string
}

// ErrExists is wrapped when a dataset is registered twice.
var ErrExists = errors.New("already exists")

// Spend is one release asked of the ledger.
type Spend struct {
	Dataset string
	Class   *markov.Class   // the class Θ the release is calibrated for
	Record  *record.Release // its segments, mechanism and ε
	Token   string          // who spends it (the service's token id); "" from the CLI
	// TokenBudget, when set, limits the composed ε of this token's
	// releases on the dataset, inside the dataset's budget.
	TokenBudget *big.Rat
	// IdempotencyKey, when set, makes a repeated request (same token, same
	// key) return the recorded release instead of drawing fresh noise —
	// fresh noise on a retry could be averaged away. RequestHash tells a
	// true repeat from a different request reusing the key
	// (ErrKeyReused).
	IdempotencyKey string
	RequestHash    string
	// Stream, with a Record marked Stream, creates the dataset's stream
	// with these settings in the same transaction as its one charge
	// (Store.AppendStream then feeds it).
	Stream *StreamInit
}

// Receipt is what Spend returns: the recorded release and the dataset's
// state after it. Replayed is true when an idempotency key matched an
// earlier release: nothing new was drawn or spent, and State is the state
// recorded with that release.
type Receipt struct {
	State    State
	ID       int64
	Result   json.RawMessage
	Replayed bool
}

// ErrKeyReused is returned when an idempotency key comes back with a
// different request.
var ErrKeyReused = errors.New("idempotency key already used for a different request")

// State is a dataset's budget after its recorded releases.
type State struct {
	Dataset   string
	Budget    *big.Rat
	Spent     guarantee.Guarantee // the composed guarantee of every recorded release
	Releases  int
	ClassHash string // "" until a class is set
	// Err, in a listing (Store.Datasets), marks a dataset whose stored
	// definition or records cannot be read (it wraps ErrUnreadable); the
	// other fields are then unset. A listing shows it with the others
	// instead of failing.
	Err error
}

// ErrUnreadable is wrapped when a dataset's stored definition or records
// cannot be read back (written by an older version, or edited by hand).
var ErrUnreadable = errors.New("cannot be read")

// Remaining is Budget − Spent (never negative).
func (s State) Remaining() *big.Rat {
	if s.Budget == nil || s.Spent.Epsilon == nil {
		return new(big.Rat)
	}
	r := new(big.Rat).Sub(s.Budget, s.Spent.Epsilon)
	if r.Sign() < 0 {
		return new(big.Rat)
	}
	return r
}

// MarshalJSON writes {"dataset", "spent", "budget", "remaining", "rule",
// "theorem", "releases", "class_hash"}: numbers printed as decimals, spent
// rounded up and remaining rounded down when they are not short decimals;
// an unreadable dataset (Err) as {"dataset", "error"}.
func (s State) MarshalJSON() ([]byte, error) {
	if s.Err != nil {
		// {"dataset", "error"}: nothing else is known
		return json.Marshal(map[string]string{"dataset": s.Dataset, "error": s.Err.Error()})
	}
	return json.Marshal(struct {
		Dataset   string      `json:"dataset"`
		Spent     json.Number `json:"spent"`
		Budget    json.Number `json:"budget"`
		Remaining json.Number `json:"remaining"`
		Rule      string      `json:"rule"`
		Theorem   string      `json:"theorem,omitempty"`
		Releases  int         `json:"releases"`
		ClassHash string      `json:"class_hash,omitempty"`
	}{s.Dataset, number(s.Spent.Float()), number(guarantee.Down(s.Budget)), number(guarantee.Down(s.Remaining())), s.Spent.Rule, s.Spent.Theorem, s.Releases, s.ClassHash})
}

func number(f float64) json.Number { return json.Number(fmtFloat(f)) }

// Entry is one recorded release.
type Entry struct {
	ID      int64           `json:"id"`
	Dataset string          `json:"dataset"`
	Time    time.Time       `json:"time"`
	Token   string          `json:"token,omitempty"`
	Record  record.Release  `json:"record"`
	Result  json.RawMessage `json:"result"` // the noisy result as released
	Spent   json.Number     `json:"spent"`  // the dataset's composed ε after this release (rounded up)
	Rule    string          `json:"rule"`
}

// Refused is the error of a release that would exceed the budget.
type Refused struct {
	State     State               // before the release
	Requested *big.Rat            // the release's own ε
	Would     guarantee.Guarantee // the composed guarantee with the release
}

// ErrRefused is wrapped by every *Refused.
var ErrRefused = errors.New("privacy budget exceeded")

func (r *Refused) Error() string {
	return fmt.Sprintf("dataset %q: %v: this release (ε = %s) would bring the total to ε = %s by %s, over the budget %s (spent %s, remaining %s); nothing was released or recorded",
		r.State.Dataset, ErrRefused, Decimal(r.Requested), Decimal(r.Would.Epsilon), r.Would.Rule, Decimal(r.State.Budget), Decimal(r.State.Spent.Epsilon), DecimalDown(r.State.Remaining()))
}

func (r *Refused) Unwrap() error { return ErrRefused }

var budgetSyntax = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?(/[0-9]+)?$`)

// ErrUnknown is wrapped when a dataset is not in the ledger.
var ErrUnknown = errors.New("unknown dataset")

// ParseBudget reads a total budget: a decimal or a fraction with a finite
// decimal expansion (stored exactly as a decimal), > 0.
func ParseBudget(s string) (*big.Rat, error) {
	t := strings.TrimSpace(s)
	// plain digits only: an exponent such as 1e-1000000000 would make
	// big.Rat compute a billion-digit power
	if len(t) > 64 || !budgetSyntax.MatchString(t) {
		return nil, fmt.Errorf("budget %q: want a decimal such as 1 or 2.5 (or a fraction 5/2)", s)
	}
	r, ok := new(big.Rat).SetString(t)
	if !ok || r.Sign() <= 0 {
		return nil, fmt.Errorf("budget %q: want a number > 0 (a decimal such as 1 or 2.5)", s)
	}
	if n, exact := r.FloatPrec(); !exact || n > 30 {
		return nil, fmt.Errorf("budget %q: want a decimal with at most 30 digits after the point (%s is not one)", s, r.RatString())
	}
	if r.Cmp(big.NewRat(1e6, 1)) > 0 {
		return nil, fmt.Errorf("budget %q: want at most 1000000", s)
	}
	return r, nil
}

// Decimal prints an exact rational as a decimal: exactly when it has a
// finite expansion of at most 30 digits after the point, else as the
// float64 rounded up (guarantee.Up).
func Decimal(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if n, exact := r.FloatPrec(); exact && n <= 30 {
		return r.FloatString(n) // n is the exact number of decimals: no trailing zeros
	}
	return fmtFloat(guarantee.Up(r))
}

// DecimalDown is Decimal rounding down instead of up: how a remaining
// budget is shown.
func DecimalDown(r *big.Rat) string {
	if n, exact := r.FloatPrec(); exact && n <= 30 {
		return r.FloatString(n)
	}
	return fmtFloat(guarantee.Down(r))
}

// NameRule is the alphabet of dataset names (a stream's name is its
// dataset's), said in every refusal: ValidName checks it wherever a name
// enters — a registration (Store.Init: the service's POST /v1/datasets,
// puff ledger init, a log's migration), a token's scope (ValidScope: puff
// token create).
const NameRule = "1–128 ASCII letters, digits, '.', '_' or '-', starting with a letter or digit (without '/', spaces, '*' or other characters); names that differ only in case are one name"

var nameSyntax = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// NameError is a dataset name outside NameRule.
type NameError struct{ Name string }

func (e *NameError) Error() string {
	return fmt.Sprintf("dataset name %q: want %s", e.Name, NameRule)
}

// ValidName checks a dataset name against NameRule: a name is never
// "*" (which a scope reads as every dataset), "." or "..", never has
// spaces (a scope "release: activity" names no dataset) or bytes that
// are not printable ASCII (no invalid UTF-8, nothing that looks like
// another name); series are named dataset/series in exports, so no '/'.
func ValidName(name string) error {
	if !nameSyntax.MatchString(name) {
		return &NameError{name}
	}
	return nil
}

func validName(name string) error { return ValidName(name) }

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// Brief is an entry without its record's segments: what a listing of a
// dataset's releases shows (puff ledger show, the service's ledger).
type Brief struct {
	ID        int64           `json:"id"`
	Time      time.Time       `json:"time"`
	Token     string          `json:"token,omitempty"`
	Mechanism string          `json:"mechanism"`
	Epsilon   float64         `json:"epsilon"`
	Query     string          `json:"query"`
	Segments  int             `json:"segments"`
	Spent     json.Number     `json:"spent"` // the dataset's composed ε after this release
	Rule      string          `json:"rule"`
	Result    json.RawMessage `json:"result,omitempty"`
}

// Brief summarises the entry; withResult keeps its noisy result.
func (e Entry) Brief(withResult bool) Brief {
	b := Brief{e.ID, e.Time, e.Token, string(e.Record.Mechanism), e.Record.Epsilon, e.Record.QueryName(), len(e.Record.Segments), e.Spent, e.Rule, nil}
	if withResult {
		b.Result = e.Result
	}
	return b
}

// withRule is g said to hold by another rule's name (the same ε).
func withRule(g guarantee.Guarantee, rule string) guarantee.Guarantee {
	g.Rule = rule
	return g
}
