package main

import (
	"context"
	"testing"

	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// The TUI's Leave leaves a channel on the server, as chat channel
// leave does: the list shows it no longer joined, and leaving again is
// refused with a code.
func TestTUIBackendLeavesChannel(t *testing.T) {
	srv := servertest.Start(t)
	ctx := context.Background()
	alice, _ := account(t, srv, "alice")
	bob, _ := account(t, srv, "bob")
	s, err := alice.session()
	if err != nil {
		t.Fatal(err)
	}
	ops, err := s.API().CreateConversation(ctx, wire.CreateConversationRequest{Type: wire.Channel, Name: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bob.JoinChannel(ctx, ops.ConversationID); err != nil {
		t.Fatal(err)
	}
	joined := func() bool {
		t.Helper()
		list, err := bob.Channels(ctx)
		if err != nil || len(list) != 1 {
			t.Fatalf("channels %+v, %v", list, err)
		}
		return list[0].Joined
	}
	if !joined() {
		t.Fatal("not joined after JoinChannel")
	}
	if err := bob.Leave(ctx, ops.ConversationID); err != nil {
		t.Fatal(err)
	}
	if joined() {
		t.Fatal("still joined after Leave")
	}
	if err := bob.Leave(ctx, ops.ConversationID); err == nil || wire.ErrorCode(err) == wire.CodeInternal {
		t.Fatalf("leaving again: %v, want the server's refusal", err)
	}
}
