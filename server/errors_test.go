package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/chatterm/chat/wire"
)

// Every 503 says when to retry: a client (chat send, the outbox) resends on
// the hint, with the same message_id.
func TestUnavailableCarriesRetryHint(t *testing.T) {
	s := &Service{log: slog.New(slog.DiscardHandler)}
	for _, cause := range []error{
		fmt.Errorf("dynamo append: %w", context.DeadlineExceeded),
		context.Canceled,
		errors.New("dynamo append: connection refused"),
	} {
		e := wire.AsError(s.internal("store message", cause))
		if e.Code != wire.CodeUnavailable || e.RetryAfterMs <= 0 {
			t.Errorf("%v: answered %+v, want unavailable with a retry hint", cause, e)
		}
	}
}
