package puffbeam

import (
	"strings"
)

// Cause is the root cause of a failed pipeline, as the user should read
// it first and alone: a runner passes a worker's error on as text, after
// a trace of the stage's plan ("... caused by:\n ... caused by:\nDoFn[...]
// failed:\nbad.csv:3: ..."), and that error — a file's line, the ledger's
// refusal — is the last cause. An error without such a trace is its own
// cause. The cause is one line: what follows it is the runner's.
func Cause(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	const by = "caused by:\n"
	i := strings.LastIndex(msg, by)
	if i < 0 {
		return err
	}
	cause := strings.TrimSpace(msg[i+len(by):])
	if first, rest, ok := strings.Cut(cause, "\n"); ok && strings.HasPrefix(first, "DoFn[") && strings.HasSuffix(first, "failed:") {
		cause = strings.TrimSpace(rest)
	}
	// the project's errors are one line; what follows is the runner's
	// (ptest adds a note on its migration to Prism)
	cause, _, _ = strings.Cut(cause, "\n")
	if cause == "" {
		return err
	}
	return &causeError{cause, err}
}

// causeError is a root cause's text, wrapping the runner's whole error.
type causeError struct {
	msg string
	err error
}

func (e *causeError) Error() string { return e.msg }
func (e *causeError) Unwrap() error { return e.err }
