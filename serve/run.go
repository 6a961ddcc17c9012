package serve

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"time"
)

// ListenAndServe serves the service on addr (host:port) until ctx is done,
// then shuts down gracefully: it stops accepting, lets requests in flight
// finish (their ledger transactions commit or roll back) for up to 30 s,
// and returns nil. It logs "serving" with the address and attrs, and
// "shutting down".
func (s *Server) ListenAndServe(ctx context.Context, addr string, attrs ...any) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute}
	s.log.Info("serving", append([]any{"addr", "http://" + ln.Addr().String()}, attrs...)...)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// RedactDSN is a ledger's DSN fit for a log: a URL's password is masked.
func RedactDSN(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		return u.Redacted()
	}
	return dsn
}
