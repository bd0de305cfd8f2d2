package client

import (
	"context"
	"errors"
	"time"

	"github.com/chatterm/chat/wire"
)

// WaitPassed blocks until every member of the conversation other than us has a
// boundary at or past seq: the delivered one, or the read one when read is
// true (for a group, every member, as ticks are derived). It listens on a
// WebSocket for status frames, having asked for the current boundaries only
// after the socket was up so no move is missed; a lost socket is redialled. It returns
// ctx's error when ctx ends first.
func WaitPassed(ctx context.Context, api *API, conversationID string, seq int64, read bool) error {
	attempt := 0
	for {
		err := waitOnce(ctx, api, conversationID, seq, read)
		if err == nil || ctx.Err() != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return nil
		}
		var ce *CloseError
		if !IsNetError(err) && !errors.As(err, &ce) || TokenRevoked(err) {
			return err
		}
		t := time.NewTimer(Backoff{}.Delay(attempt, nil))
		attempt++
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}

func waitOnce(ctx context.Context, api *API, conv string, seq int64, read bool) error {
	conn, err := Dial(ctx, api.Server(), api.Token(), api.hc)
	if err != nil {
		return err
	}
	defer conn.CloseNow()
	self := conn.UserID()
	st, err := api.Status(ctx, conv)
	if err != nil {
		return err
	}
	boundary := map[string]int64{}
	set := func(m wire.MemberStatus) {
		b := m.LastDeliveredSeq
		if read {
			b = m.LastReadSeq
		}
		boundary[m.UserID] = max(boundary[m.UserID], b)
	}
	for _, m := range st.Members {
		set(m)
	}
	passed := func() bool {
		for u, b := range boundary {
			if u != self && b < seq {
				return false
			}
		}
		return true
	}
	for !passed() {
		f, err := conn.Read(ctx)
		if wire.ErrorCode(err) == wire.CodeInvalid {
			continue
		}
		if err != nil {
			return err
		}
		if f.Type == wire.TypeStatus && f.ConversationID == conv {
			set(*f.Status)
		}
	}
	conn.Close()
	return nil
}
