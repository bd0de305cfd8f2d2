package client

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http/httptrace"
	"sync/atomic"
	"time"

	"github.com/chatterm/chat/wire"
)

// DefaultRetryFor bounds Retry when the caller's context has no deadline.
const DefaultRetryFor = time.Minute

// Retry calls attempt until it succeeds, fails in a way a repeat cannot cure,
// or ctx ends (DefaultRetryFor when ctx has no deadline). A repeat is tried
// after an answer that says the server could not do it now (rate_limited,
// overloaded, unavailable, maybe_stored: once its retry hint has passed, or
// after a short backoff when it gave none), after a failure to reach the
// server, and after an attempt that took more than its share of the time left
// (each gets a quarter, at least 2 s), so one hung connection does not use up
// the whole budget. attempt must be safe to repeat: a read, or a send with
// the same message_id. The error returned is the last attempt's.
func Retry(ctx context.Context, attempt func(ctx context.Context) error) error {
	_, err := retry(ctx, attempt, false)
	return err
}

// retry is Retry that also says whether any attempt may have reached the
// server and been acted on without an answer saying so (see MaybeStoredError).
// With httpOnly (every attempt is one HTTP request made with the context it
// is given), an attempt whose request was never written, not even its
// headers, was acted on by nobody, whatever ended it: a deadline that ran
// out while it dialed (a loaded machine, a server that does not accept) is
// not "maybe stored".
func retry(ctx context.Context, attempt func(ctx context.Context) error, httpOnly bool) (unsure bool, err error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultRetryFor)
		defer cancel()
	}
	backoff := 100 * time.Millisecond
	for {
		budget := attemptBudget(ctx)
		actx, cancel := context.WithTimeout(ctx, budget)
		var wrote atomic.Bool
		if httpOnly {
			actx = httptrace.WithClientTrace(actx, &httptrace.ClientTrace{WroteHeaders: func() { wrote.Store(true) }})
		}
		err = attempt(actx)
		attemptTimedOut := err != nil && actx.Err() != nil && ctx.Err() == nil
		cancel()
		if attemptTimedOut {
			err = fmt.Errorf("no answer within %s: %w", budget.Round(time.Millisecond), err)
		}
		if err == nil {
			return unsure, nil
		}
		// An attempt that ran out of its own budget, not the caller's, may have
		// been acted on, and a repeat may get through.
		mayHaveLeft := !httpOnly || wrote.Load()
		unsure = unsure || mayHaveLeft && (attemptTimedOut || outcomeUnknown(err))
		var delay time.Duration
		switch hint := retryHint(err); {
		case hint > 0:
			delay = hint
		case attemptTimedOut || IsNetError(err) || errors.As(err, new(*wire.Error)) && wire.ErrorCode(err).Retryable():
			// No hint (a proxy's bare 503, a dropped connection): back off
			// exponentially, with jitter so many clients do not come back at once.
			delay = backoff/2 + rand.N(backoff/2+1)
			backoff = min(2*backoff, 2*time.Second)
		default:
			return unsure, err
		}
		if ctx.Err() != nil {
			return unsure, err
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < delay {
			return unsure, err // the hint is past what the caller will wait: say why now
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return unsure, err
		}
	}
}

// attemptBudget is how long one attempt may take: a quarter of what is left
// of ctx, at least 2 s (never more than what is left).
func attemptBudget(ctx context.Context) time.Duration {
	dl, ok := ctx.Deadline()
	if !ok {
		return DefaultRetryFor
	}
	left := time.Until(dl)
	return min(left, max(left/4, 2*time.Second))
}

// outcomeUnknown says whether a failed request may have been acted on: the
// server said it may have (maybe_stored), failed inside (internal,
// unavailable), or did not answer after the request may have left. A refusal
// (invalid, forbidden, rate limited...) and a connection never made are
// known outcomes: nothing was done.
func outcomeUnknown(err error) bool {
	var we *wire.Error
	if errors.As(err, &we) {
		switch we.Code {
		case wire.CodeMaybeStored, wire.CodeInternal, wire.CodeUnavailable:
			return true
		}
		return false
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return true // ended while waiting for the answer
	}
	if !IsNetError(err) {
		return false
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return false // refused, unreachable, no such host: nothing was sent
	}
	return true
}

// MaybeStoredError is a send given up on while its outcome is unknown: some
// attempt may have stored the message. Resending with MessageID stores it
// once, so that is the way to settle it; a send with a fresh id may store a
// second copy.
type MaybeStoredError struct {
	MessageID string
	Err       error // the last attempt's failure
}

func (e *MaybeStoredError) Error() string {
	return fmt.Sprintf("message %s may be stored: %v", e.MessageID, e.Err)
}

func (e *MaybeStoredError) Unwrap() error { return e.Err }
