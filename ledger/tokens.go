package ledger

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"
)

// Token is a bearer token of the release service: an id, its scopes and
// an optional budget of its own. The secret ("puff_<id>_<64 hex>") is
// shown once at creation and stored only as its SHA-256.
//
// Scopes: "admin" (register datasets, everything else), "release:NAME"
// (release on dataset NAME, and read it), "read:NAME" (read its state and
// ledger), "feed:NAME" (append readings to the stream NAME and close its
// windows, and read it); NAME may be "*" for every dataset.
//
// Feeding is the data custodian's act, kept apart from releasing: whether
// an appended reading is accepted depends on the readings appended before
// it (their order and time grid), so a feeder learns about the stored
// readings and may end windows early; an analyst's release token must do
// neither.
type Token struct {
	ID      string     `json:"id"`
	Scopes  []string   `json:"scopes"`
	Budget  *big.Rat   `json:"-"`
	Created time.Time  `json:"created"`
	Revoked *time.Time `json:"revoked,omitempty"`
}

// MarshalJSON writes {"id", "scopes", "budget" (when the token has one,
// as a decimal), "created", "revoked"}: what puff token list shows, never
// the secret.
func (t Token) MarshalJSON() ([]byte, error) {
	type plain Token // without this method
	var budget *json.Number
	if t.Budget != nil {
		n := json.Number(Decimal(t.Budget))
		budget = &n
	}
	return json.Marshal(struct {
		plain
		Budget *json.Number `json:"budget,omitempty"`
	}{plain(t), budget})
}

// Can reports whether the token holds scope ("admin" holds every scope;
// "release:NAME" and "feed:NAME" hold "read:NAME"; "*" matches every
// dataset). Neither of release and feed holds the other.
func (t Token) Can(scope string) bool {
	kind, name, _ := strings.Cut(scope, ":")
	for _, s := range t.Scopes {
		if s == "admin" || s == scope {
			return true
		}
		k, n, _ := strings.Cut(s, ":")
		holds := k == kind || kind == "read" && (k == "release" || k == "feed")
		if holds && (n == "*" || n == name) {
			return true
		}
	}
	return false
}

// ErrBadToken is returned for a missing, unknown or revoked token.
var ErrBadToken = errors.New("invalid or revoked token")

// ValidScope checks one scope's syntax.
func ValidScope(s string) error {
	if s == "admin" {
		return nil
	}
	kind, name, ok := strings.Cut(s, ":")
	if !ok || (kind != "release" && kind != "read" && kind != "feed") {
		return fmt.Errorf("scope %q: want admin, release:DATASET, read:DATASET or feed:DATASET (DATASET may be *)", s)
	}
	if name == "*" {
		return nil
	}
	if err := ValidName(name); err != nil {
		return fmt.Errorf("scope %q: %w (or * for every dataset)", s, err)
	}
	return nil
}

func hashSecret(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

func (s *sqlStore) CreateToken(ctx context.Context, scopes []string, budget *big.Rat) (string, Token, error) {
	if len(scopes) == 0 {
		return "", Token{}, errors.New("ledger: a token needs at least one scope")
	}
	for _, sc := range scopes {
		if err := ValidScope(sc); err != nil {
			return "", Token{}, fmt.Errorf("ledger: %w", err)
		}
	}
	var budgetText sql.NullString
	if budget != nil {
		if n, exact := budget.FloatPrec(); budget.Sign() <= 0 || !exact || n > 30 {
			return "", Token{}, fmt.Errorf("ledger: token budget %s: want a decimal > 0", budget.RatString())
		}
		budgetText = sql.NullString{String: Decimal(budget), Valid: true}
	}
	var id [6]byte
	var secret [32]byte
	rand.Read(id[:])
	rand.Read(secret[:])
	t := Token{ID: hex.EncodeToString(id[:]), Scopes: slices.Clone(scopes), Budget: budget, Created: time.Now().UTC()}
	full := "puff_" + t.ID + "_" + hex.EncodeToString(secret[:])
	_, err := s.db.ExecContext(ctx, s.q(`INSERT INTO tokens (id, hash, scopes, budget, created_at) VALUES (?, ?, ?, ?, ?)`),
		t.ID, hashSecret(full), strings.Join(scopes, " "), budgetText, t.Created.Format(time.RFC3339Nano))
	if err != nil {
		return "", Token{}, fmt.Errorf("ledger: %w", err)
	}
	return full, t, nil
}

func (s *sqlStore) RevokeToken(ctx context.Context, id string) error {
	res, err := s.db.ExecContext(ctx, s.q(`UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`), now(), id)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("ledger: no live token with id %q", id)
	}
	return nil
}

func (s *sqlStore) Authenticate(ctx context.Context, secret string) (Token, error) {
	parts := strings.Split(secret, "_")
	if len(parts) != 3 || parts[0] != "puff" || len(parts[1]) != 12 || len(parts[2]) != 64 {
		return Token{}, ErrBadToken
	}
	ts, err := s.tokens(ctx, parts[1])
	if err != nil {
		return Token{}, err
	}
	if len(ts) != 1 || ts[0].Revoked != nil {
		return Token{}, ErrBadToken
	}
	var stored string
	if err := s.db.QueryRowContext(ctx, s.q(`SELECT hash FROM tokens WHERE id = ?`), parts[1]).Scan(&stored); err != nil {
		return Token{}, ErrBadToken
	}
	if subtle.ConstantTimeCompare([]byte(stored), []byte(hashSecret(secret))) != 1 {
		return Token{}, ErrBadToken
	}
	return ts[0], nil
}

func (s *sqlStore) Tokens(ctx context.Context) ([]Token, error) { return s.tokens(ctx, "") }

// tokens lists tokens (one id, or all for "").
func (s *sqlStore) tokens(ctx context.Context, id string) ([]Token, error) {
	q := `SELECT id, scopes, budget, created_at, revoked_at FROM tokens`
	var args []any
	if id != "" {
		q += ` WHERE id = ?`
		args = append(args, id)
	}
	rows, err := s.db.QueryContext(ctx, s.q(q+` ORDER BY created_at, id`), args...)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	defer rows.Close()
	var out []Token
	for rows.Next() {
		var t Token
		var scopes, created string
		var budget, revoked sql.NullString
		if err := rows.Scan(&t.ID, &scopes, &budget, &created, &revoked); err != nil {
			return nil, fmt.Errorf("ledger: %w", err)
		}
		t.Scopes = strings.Fields(scopes)
		if budget.Valid {
			t.Budget, _ = new(big.Rat).SetString(budget.String)
		}
		t.Created, _ = time.Parse(time.RFC3339Nano, created)
		if revoked.Valid {
			r, _ := time.Parse(time.RFC3339Nano, revoked.String)
			t.Revoked = &r
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// ParseToken checks a token's scopes (ValidScope) and reads its optional
// budget ("" for none: nil) as puff token create gives them.
func ParseToken(scopes []string, budget string) (*big.Rat, error) {
	var b *big.Rat
	if budget != "" {
		var err error
		if b, err = ParseBudget(budget); err != nil {
			return nil, fmt.Errorf("--%w", err)
		}
	}
	for _, s := range scopes {
		if err := ValidScope(s); err != nil {
			return nil, fmt.Errorf("--scope: %w", err)
		}
	}
	return b, nil
}
