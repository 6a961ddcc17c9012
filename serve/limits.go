package serve

import (
	"context"
	"errors"
	"time"

	"github.com/pufferfish-privacy/pufferfish/release"
)

// prepare computes a release up to its noise under the server's limits
// (refused before any work, naming the limit and puff serve's flag) and
// the request's context, bounded by the release timeout: a client that
// has gone or a computation past the timeout stops between windows and
// between series' patterns, and nothing is spent.
func (s *Server) prepare(ctx context.Context, d *dataset, opts release.Options, width time.Duration) (*release.Pending, error) {
	ctx, cancel := s.computing(ctx)
	defer cancel()
	opts.Context, opts.Limits = ctx, s.cfg.Limits
	p, err := release.PrepareData(d.data, d.class, d.fitted, opts, width, d.locOrUTC())
	var le *release.LimitError
	switch {
	case err == nil:
		return p, nil
	case errors.As(err, &le):
		field := "window"
		switch {
		case opts.Profile != "":
			field = "profile"
		case le.Width == 0:
			field = ""
		}
		return nil, bad(field, "%v", err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return nil, err
	}
	return nil, bad("", "%v", err)
}

// computing is the context of a request's computation: the request's
// (a client that leaves, the server shutting down: ListenAndServe's
// BaseContext) bounded by the release timeout (puff serve
// --release-timeout). Every σ search runs under it (mqm.ScaleContext) and
// stops within about a second of its end.
func (s *Server) computing(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.cfg.ReleaseTimeout > 0 {
		return context.WithTimeout(ctx, s.cfg.ReleaseTimeout)
	}
	return context.WithCancel(ctx)
}
