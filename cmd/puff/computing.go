package main

import (
	"context"
	"errors"
	"fmt"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/pufferfish-privacy/pufferfish/mqm"
)

// DefaultTimeout is how long puff release and puff scale compute before
// stopping (--timeout; the same as puff serve --release-timeout).
const DefaultTimeout = 5 * time.Minute

// maxMemoryMB is --max-memory (MiB): the live heap past which a σ search
// stops (mqm.SetMaxMemory).
var maxMemoryMB int

func memoryFlag(c *cobra.Command, what string) {
	c.Flags().IntVar(&maxMemoryMB, "max-memory", mqm.DefaultMaxMemory>>20, "MiB of live heap past which "+what+" stops with an error (the quilt search's tables grow with the distances it visits); 0: no limit")
}

// computing is the context a command computes under: it ends on SIGINT or
// SIGTERM, and after timeout (0: none). Every σ search checks it
// (mqm.ScaleContext) and stops within about a second.
func computing(cmd *cobra.Command, timeout time.Duration) (context.Context, context.CancelFunc) {
	mqm.SetMaxMemory(uint64(maxMemoryMB) << 20)
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
	if timeout <= 0 {
		return ctx, stop
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	return tctx, func() { cancel(); stop() }
}

// stoppedErr says why a computation stopped, naming the flag that raises
// its limit; other errors are returned as they are.
func stoppedErr(err error, timeout time.Duration) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("stopped after %v, the limit of --timeout (raise it, or --timeout 0 for none); nothing was released or recorded", timeout)
	case errors.Is(err, context.Canceled):
		return errors.New("stopped by a signal; nothing was released or recorded")
	}
	return err
}
