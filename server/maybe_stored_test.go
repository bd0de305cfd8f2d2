package server_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/sqlite"
	"github.com/chatterm/chat/wire"
)

// faultyWrites is a real store whose next message write fails as told: lost
// (made, then reported as timed out, as a DynamoDB that hangs after applying a
// transaction looks to the Service) or refused (not made, the circuit open).
type faultyWrites struct {
	*sqlite.Store
	next string // "lost", "refused" or ""
}

func (f *faultyWrites) fault(write func() error) error {
	mode := f.next
	f.next = ""
	switch mode {
	case "refused":
		return fmt.Errorf("store: %w: %w: circuit open", server.ErrUnavailable, server.ErrNotApplied)
	case "lost":
		if err := write(); err != nil {
			return err
		}
		return fmt.Errorf("store: %w: %w", server.ErrUnavailable, context.DeadlineExceeded)
	}
	return write()
}

func (f *faultyWrites) AppendMessage(ctx context.Context, m server.Message, receivers []string) error {
	return f.fault(func() error { return f.Store.AppendMessage(ctx, m, receivers) })
}

func (f *faultyWrites) AppendMessages(ctx context.Context, msgs []server.Message, receivers []string) (dups []*server.DuplicateError, err error) {
	err = f.fault(func() error {
		var err error
		dups, err = f.Store.AppendMessages(ctx, msgs, receivers)
		return err
	})
	return dups, err
}

// A send whose write may have been made is answered maybe_stored (not a plain
// unavailable a client could take for "not stored" and send anew under a new
// id); the resend with the same message_id gets the stored message, once. A
// write refused before it was sent is plain unavailable, and its resend is
// stored.
func TestSendMaybeStored(t *testing.T) {
	ctx := context.Background()
	store := &faultyWrites{Store: openStore(t)}
	svc := serviceOn(t, store, server.Config{SendRate: -1})
	registerAliceAndBob(t, svc)
	conv := wire.DirectConversationID("alice", "bob")
	if _, _, err := svc.CreateConversation(ctx, "alice", wire.CreateConversationRequest{Type: wire.Direct, Members: []string{"bob"}}); err != nil {
		t.Fatal(err)
	}
	send := func(id string) (wire.SendResponse, bool, error) {
		return svc.Send(ctx, "alice", conv, wire.SendRequest{MessageID: id, Content: "text of " + id}, nil)
	}

	store.next = "lost"
	_, _, err := send("m1")
	var we *wire.Error
	if !errors.As(err, &we) || we.Code != wire.CodeMaybeStored || we.RetryAfterMs <= 0 || we.Code.HTTPStatus() != 503 {
		t.Fatalf("send whose answer was lost: %v, want maybe_stored (503) with a retry hint", err)
	}
	resp, created, err := send("m1")
	if err != nil || created || resp.SeqNo != 1 {
		t.Fatalf("resend: %+v created=%v err=%v, want the stored seq 1, not stored again", resp, created, err)
	}

	store.next = "refused"
	if _, _, err := send("m2"); !errors.As(err, &we) || we.Code != wire.CodeUnavailable || we.RetryAfterMs <= 0 {
		t.Fatalf("send refused before the write: %v, want unavailable with a retry hint", err)
	}
	resp, created, err = send("m2")
	// The refused write had taken a seq_no: a gap, as after any failed write
	// (readers and unread counts go by the messages, not the numbers).
	if err != nil || !created || resp.SeqNo < 2 {
		t.Fatalf("resend of the refused one: %+v created=%v err=%v, want stored now after seq 1", resp, created, err)
	}

	h, err := svc.History(ctx, "bob", conv, 0, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	msgs := h.Messages
	slices.SortFunc(msgs, func(a, b wire.Message) int { return cmp.Compare(a.SeqNo, b.SeqNo) })
	for _, m := range msgs {
		ids = append(ids, fmt.Sprintf("%d:%s", m.SeqNo, m.MessageID))
	}
	if want := fmt.Sprint([]string{"1:m1", fmt.Sprintf("%d:m2", resp.SeqNo)}); fmt.Sprint(ids) != want {
		t.Fatalf("history %v, want %v: each message once, in order", ids, want)
	}
}
