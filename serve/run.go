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
// then shuts down: it stops accepting, ends the contexts of the requests
// in flight (a σ search stops within about a second, nothing is spent;
// ledger transactions commit or roll back), waits for them for up to
// 30 s, and returns nil. It logs "serving" with the address and attrs, and
// "shutting down".
func (s *Server) ListenAndServe(ctx context.Context, addr string, attrs ...any) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	// Requests' contexts end with ctx, so a computation in flight stops
	// (within about a second, nothing spent) instead of holding up the
	// shutdown; ledger transactions in flight roll back.
	base, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute,
		BaseContext: func(net.Listener) context.Context { return base }}
	s.log.Info("serving", append([]any{"addr", "http://" + ln.Addr().String()}, attrs...)...)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.log.Info("shutting down")
	stop()
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
