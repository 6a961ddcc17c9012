package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// StreamInit is what a stream is created with: its settings (opaque to
// the ledger: how to read and release, package stream) and its initial
// running state.
type StreamInit struct {
	Settings json.RawMessage
	State    json.RawMessage
}

// Stream is a dataset's stream as stored.
type Stream struct {
	Dataset   string
	ReleaseID int64 // the release that charged the dataset for it
	Settings  json.RawMessage
	State     json.RawMessage // never printed: it holds counts of open windows
}

// StreamWindow is one released window: its calendar index and the
// released object (its noisy histogram and report).
type StreamWindow struct {
	Index  int64
	Result json.RawMessage
}

// Appended is what AppendStream did.
type Appended struct {
	Windows   []StreamWindow // the windows this append released
	Duplicate bool           // the file was appended before: nothing changed
}

// ErrNoStream is wrapped when a dataset has no stream.
var ErrNoStream = errors.New("has no stream")

func (s *sqlStore) createStream(ctx context.Context, tx *sql.Tx, dataset string, releaseID int64, in *StreamInit) error {
	if !json.Valid(in.Settings) || !json.Valid(in.State) {
		return errors.New("ledger: a stream's settings and state must be JSON")
	}
	var n int
	if err := tx.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM streams WHERE dataset = ?`), dataset).Scan(&n); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	if n > 0 {
		return fmt.Errorf("ledger: dataset %q already has a stream (%w)", dataset, ErrExists)
	}
	t := now()
	_, err := tx.ExecContext(ctx, s.q(`INSERT INTO streams (dataset, release_id, settings, state, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`),
		dataset, releaseID, string(in.Settings), string(in.State), t, t)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	return nil
}

func (s *sqlStore) stream(ctx context.Context, q querier, dataset string) (Stream, error) {
	st := Stream{Dataset: dataset}
	var settings, state string
	err := q.QueryRowContext(ctx, s.q(`SELECT release_id, settings, state FROM streams WHERE dataset = ?`), dataset).Scan(&st.ReleaseID, &settings, &state)
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := s.dataset(ctx, q, dataset); err != nil {
			return Stream{}, err
		}
		return Stream{}, fmt.Errorf("ledger: dataset %q %w (create one with 'puff stream init')", dataset, ErrNoStream)
	}
	if err != nil {
		return Stream{}, fmt.Errorf("ledger: %w", err)
	}
	st.Settings, st.State = json.RawMessage(settings), json.RawMessage(state)
	return st, nil
}

func (s *sqlStore) Stream(ctx context.Context, dataset string) (Stream, error) {
	var st Stream
	err := s.readTx(ctx, func(tx *sql.Tx) error {
		var err error
		st, err = s.stream(ctx, tx, dataset)
		return err
	})
	return st, err
}

func (s *sqlStore) AppendStream(ctx context.Context, dataset, fileHash string, apply func(Stream) (json.RawMessage, []StreamWindow, error)) (Appended, error) {
	var out Appended
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if s.d.lock != "" {
			var one int
			if err := tx.QueryRowContext(ctx, s.q(s.d.lock), dataset).Scan(&one); err != nil && !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("ledger: %w", err)
			}
		}
		st, err := s.stream(ctx, tx, dataset)
		if err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM stream_files WHERE dataset = ? AND hash = ?`), dataset, fileHash).Scan(&n); err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
		if n > 0 {
			out.Duplicate = true
			return nil
		}
		state, wins, err := apply(st)
		if err != nil {
			return err
		}
		if !json.Valid(state) {
			return errors.New("ledger: a stream's state must be JSON")
		}
		t := now()
		for _, w := range wins {
			if !json.Valid(w.Result) {
				return errors.New("ledger: a window's result must be JSON")
			}
			if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO stream_windows (dataset, idx, result, created_at) VALUES (?, ?, ?, ?)`), dataset, w.Index, string(w.Result), t); err != nil {
				if strings.Contains(strings.ToLower(err.Error()), "unique") || strings.Contains(strings.ToLower(err.Error()), "duplicate") {
					return fmt.Errorf("ledger: stream %q: window %d is already released; a window's noise is never drawn twice", dataset, w.Index)
				}
				return fmt.Errorf("ledger: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, s.q(`UPDATE streams SET state = ?, updated_at = ? WHERE dataset = ?`), string(state), t, dataset); err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO stream_files (dataset, hash, created_at) VALUES (?, ?, ?)`), dataset, fileHash, t); err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
		out.Windows = wins
		return nil
	})
	if err != nil {
		return Appended{}, err
	}
	return out, nil
}

func (s *sqlStore) StreamWindows(ctx context.Context, dataset string) ([]StreamWindow, error) {
	var out []StreamWindow
	err := s.readTx(ctx, func(tx *sql.Tx) error {
		if _, err := s.stream(ctx, tx, dataset); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, s.q(`SELECT idx, result FROM stream_windows WHERE dataset = ? ORDER BY idx`), dataset)
		if err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var w StreamWindow
			var res string
			if err := rows.Scan(&w.Index, &res); err != nil {
				return fmt.Errorf("ledger: %w", err)
			}
			w.Result = json.RawMessage(res)
			out = append(out, w)
		}
		return rows.Err()
	})
	return out, err
}
