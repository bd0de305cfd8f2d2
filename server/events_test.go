package server_test

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/files"
	"github.com/chatterm/chat/wire"
)

// eventsFixture is a Service on SQLite and files with alice, bob and carol,
// a direct conversation of alice and bob and a group of all three (alice
// its admin).
type eventsFixture struct {
	t           *testing.T
	svc         *server.Service
	store       server.Store
	blobs       *files.Store
	direct, grp string
	n           int
}

func newEventsFixture(t *testing.T) *eventsFixture {
	t.Helper()
	blobs, err := files.Open(filepath.Join(t.TempDir(), "blobs"), files.Options{BaseURL: "http://127.0.0.1/blobs/"})
	if err != nil {
		t.Fatal(err)
	}
	store := openStore(t)
	svc := serviceOn(t, store, server.Config{SendRate: -1, Backends: server.Backends{Blobs: blobs}})
	ctx := context.Background()
	for _, u := range []string{"alice", "bob", "carol"} {
		if _, err := svc.Register(ctx, wire.RegisterRequest{UserID: u, Password: "password-" + u}, ""); err != nil {
			t.Fatal(err)
		}
	}
	g, _, err := svc.CreateConversation(ctx, "alice", wire.CreateConversationRequest{Type: wire.Group, Name: "team", Members: []string{"bob", "carol"}})
	if err != nil {
		t.Fatal(err)
	}
	return &eventsFixture{t: t, svc: svc, store: store, blobs: blobs, direct: wire.DirectConversationID("alice", "bob"), grp: g.ConversationID}
}

func (f *eventsFixture) send(user, conv string, req wire.SendRequest) (wire.SendResponse, bool, error) {
	f.t.Helper()
	if req.MessageID == "" {
		f.n++
		req.MessageID = "m" + strconv.Itoa(f.n)
	}
	return f.svc.Send(context.Background(), user, conv, req, nil)
}

func (f *eventsFixture) mustSend(user, conv string, req wire.SendRequest) int64 {
	f.t.Helper()
	resp, _, err := f.send(user, conv, req)
	if err != nil {
		f.t.Fatalf("%s sends %+v: %v", user, req, err)
	}
	return resp.SeqNo
}

func (f *eventsFixture) wantCode(user, conv string, req wire.SendRequest, code wire.Code) {
	f.t.Helper()
	_, _, err := f.send(user, conv, req)
	var we *wire.Error
	if !errors.As(err, &we) || we.Code != code {
		f.t.Fatalf("%s sends %+v: %v, want %s", user, req, err, code)
	}
}

// message reads seq as history shows it to user.
func (f *eventsFixture) message(user, conv string, seq int64) wire.Message {
	f.t.Helper()
	h, err := f.svc.History(context.Background(), user, conv, seq+1, 0, 1)
	if err != nil || len(h.Messages) != 1 || h.Messages[0].SeqNo != seq {
		f.t.Fatalf("history at %d: %+v, %v", seq, h, err)
	}
	return h.Messages[0]
}

func (f *eventsFixture) inbox(user, conv string) wire.InboxEntry {
	f.t.Helper()
	in, err := f.svc.Inbox(context.Background(), user, 50)
	if err != nil {
		f.t.Fatal(err)
	}
	for _, e := range in.Conversations {
		if e.ConversationID == conv {
			return e
		}
	}
	f.t.Fatalf("%s has no %s in the inbox", user, conv)
	return wire.InboxEntry{}
}

func TestReactionsToggle(t *testing.T) {
	f := newEventsFixture(t)
	hi := f.mustSend("alice", f.direct, wire.SendRequest{Content: "hi"})
	like := wire.SendRequest{Kind: wire.KindReaction, TargetSeq: hi, Content: "👍"}
	first := f.mustSend("bob", f.direct, like)
	if got := f.message("bob", f.direct, hi).Reactions; !maps.Equal(got, map[string]string{"bob": "👍"}) {
		t.Fatalf("after one 👍: %v", got)
	}
	// The same emoji again takes it away: the stored event says so.
	second := f.mustSend("bob", f.direct, like)
	if got := f.message("bob", f.direct, hi); len(got.Reactions) != 0 || got.UpdatedSeq != second {
		t.Fatalf("a reaction toggled twice left %v (updated_seq %d)", got.Reactions, got.UpdatedSeq)
	}
	if ev := f.message("bob", f.direct, second); ev.Kind != wire.KindReaction || ev.Content != "" || ev.TargetSeq != hi {
		t.Fatalf("the second toggle is stored as %+v; want a reaction with no emoji", ev)
	}
	// A different emoji replaces the first: one reaction per member.
	f.mustSend("bob", f.direct, like)
	f.mustSend("bob", f.direct, wire.SendRequest{Kind: wire.KindReaction, TargetSeq: hi, Content: "🎉"})
	if got := f.message("alice", f.direct, hi).Reactions; !maps.Equal(got, map[string]string{"bob": "🎉"}) {
		t.Fatalf("after 👍 then 🎉: %v", got)
	}
	// Reactions are not unread messages, and leave the preview alone.
	if e := f.inbox("alice", f.direct); e.Unread != 0 || e.LastMessageBody != "hi" {
		t.Fatalf("alice's inbox after bob's reactions: unread %d, preview %q", e.Unread, e.LastMessageBody)
	}
	_ = first
	f.wantCode("bob", f.direct, wire.SendRequest{Kind: wire.KindReaction, TargetSeq: hi, Content: "two words"}, wire.CodeInvalid)
	f.wantCode("bob", f.direct, wire.SendRequest{Kind: wire.KindReaction, TargetSeq: 999, Content: "👍"}, wire.CodeNotFound)
	f.wantCode("bob", f.direct, wire.SendRequest{Kind: wire.KindReaction, TargetSeq: first, Content: "👍"}, wire.CodeInvalid)
}

func TestRepliesQuoteAMessage(t *testing.T) {
	f := newEventsFixture(t)
	q := f.mustSend("alice", f.grp, wire.SendRequest{Content: "lunch?"})
	r := f.mustSend("bob", f.grp, wire.SendRequest{Content: "yes", ReplyTo: q})
	if got := f.message("carol", f.grp, r); got.ReplyTo != q || got.Content != "yes" {
		t.Fatalf("reply as carol sees it: %+v", got)
	}
	f.wantCode("bob", f.grp, wire.SendRequest{Content: "to nothing", ReplyTo: 99}, wire.CodeNotFound)
	like := f.mustSend("carol", f.grp, wire.SendRequest{Kind: wire.KindReaction, TargetSeq: q, Content: "👍"})
	f.wantCode("bob", f.grp, wire.SendRequest{Content: "to a reaction", ReplyTo: like}, wire.CodeInvalid)
	// Unread counts messages: the reply, not the reaction.
	if e := f.inbox("alice", f.grp); e.Unread != 1 {
		t.Fatalf("alice's unread after a reply and a reaction: %d, want 1", e.Unread)
	}
}

func TestEditsAndDeletesFollowTheRules(t *testing.T) {
	f := newEventsFixture(t)
	a := f.mustSend("alice", f.grp, wire.SendRequest{Content: "first"})
	b := f.mustSend("bob", f.grp, wire.SendRequest{Content: "bob's typo"})
	// Only the sender edits.
	f.wantCode("alice", f.grp, wire.SendRequest{Kind: wire.KindEdit, TargetSeq: b, Content: "not yours"}, wire.CodeForbidden)
	f.mustSend("bob", f.grp, wire.SendRequest{Kind: wire.KindEdit, TargetSeq: b, Content: "bob's text"})
	got := f.message("carol", f.grp, b)
	if got.Content != "bob's text" || !got.Edited {
		t.Fatalf("edited message: %+v", got)
	}
	if e := f.inbox("carol", f.grp); e.LastMessageBody != "bob's text" || e.Unread != 2 {
		t.Fatalf("carol's inbox after an edit of the last message: %q, unread %d", e.LastMessageBody, e.Unread)
	}
	// A member cannot delete another's message; the sender and a group admin can.
	f.wantCode("carol", f.grp, wire.SendRequest{Kind: wire.KindDelete, TargetSeq: a}, wire.CodeForbidden)
	f.mustSend("alice", f.grp, wire.SendRequest{Kind: wire.KindDelete, TargetSeq: b}) // alice is the admin
	got = f.message("bob", f.grp, b)
	if !got.Deleted || got.Content != "" {
		t.Fatalf("deleted by the admin: %+v", got)
	}
	if e := f.inbox("bob", f.grp); e.LastMessageBody != wire.DeletedPreview {
		t.Fatalf("preview after the last message was deleted: %q", e.LastMessageBody)
	}
	// A deleted message takes no edit or reaction; deleting it again is
	// answered with the delete that made the tombstone, and takes no seq_no.
	f.wantCode("bob", f.grp, wire.SendRequest{Kind: wire.KindEdit, TargetSeq: b, Content: "back"}, wire.CodeConflict)
	f.wantCode("carol", f.grp, wire.SendRequest{Kind: wire.KindReaction, TargetSeq: b, Content: "👍"}, wire.CodeConflict)
	before := f.inbox("bob", f.grp).LastSeq
	if _, created, err := f.send("bob", f.grp, wire.SendRequest{Kind: wire.KindDelete, TargetSeq: b}); err != nil || created {
		t.Fatalf("deleting a deleted message: created %v, %v", created, err)
	}
	if after := f.inbox("bob", f.grp).LastSeq; after != before {
		t.Fatalf("a second delete took seq %d", after)
	}
	// In a direct conversation nobody is an admin.
	d := f.mustSend("bob", f.direct, wire.SendRequest{Content: "mine"})
	f.wantCode("alice", f.direct, wire.SendRequest{Kind: wire.KindDelete, TargetSeq: d}, wire.CodeForbidden)
	f.wantCode("bob", f.direct, wire.SendRequest{Kind: wire.KindEdit, TargetSeq: d}, wire.CodeInvalid)
	f.wantCode("bob", f.direct, wire.SendRequest{Kind: "pin", TargetSeq: d}, wire.CodeInvalid)
}

// Edits and deletes of a message in the cold tier: the old text leaves the
// blob store (an edit puts the new text in the table; a delete leaves none).
func TestEditAndDeleteArchivedMessages(t *testing.T) {
	f := newEventsFixture(t)
	ctx := context.Background()
	one := f.mustSend("alice", f.direct, wire.SendRequest{Content: "old secret one"})
	two := f.mustSend("alice", f.direct, wire.SendRequest{Content: "old secret two"})
	cold := f.store.(server.ColdStore)
	if n, err := f.svc.ArchiveOnce(ctx, cold, -time.Hour); err != nil || n != 2 {
		t.Fatalf("archive: %d, %v", n, err)
	}
	key := func(seq int64) string { return "cold/" + f.direct + "/" + strconv.FormatInt(seq, 10) + ".json" }
	if _, err := f.blobs.Get(ctx, key(one)); err != nil {
		t.Fatalf("archived blob: %v", err)
	}
	if got := f.message("bob", f.direct, one); got.Content != "old secret one" {
		t.Fatalf("archived message read back: %+v", got)
	}
	f.mustSend("alice", f.direct, wire.SendRequest{Kind: wire.KindEdit, TargetSeq: one, Content: "new text"})
	f.mustSend("alice", f.direct, wire.SendRequest{Kind: wire.KindDelete, TargetSeq: two})
	for _, seq := range []int64{one, two} {
		if _, err := f.blobs.Get(ctx, key(seq)); !errors.Is(err, server.ErrNotFound) {
			t.Fatalf("the archived original of %d is still in the blob store: %v", seq, err)
		}
	}
	if got := f.message("bob", f.direct, one); got.Content != "new text" || !got.Edited {
		t.Fatalf("edited archived message: %+v", got)
	}
	if got := f.message("bob", f.direct, two); !got.Deleted || got.Content != "" {
		t.Fatalf("deleted archived message: %+v", got)
	}
	// The edited message goes to the cold tier again, with its new text.
	if n, err := f.svc.ArchiveOnce(ctx, cold, -time.Hour); err != nil || n != 1 {
		t.Fatalf("second archive pass: %d, %v; want the edited message only", n, err)
	}
	if got := f.message("bob", f.direct, one); got.Content != "new text" {
		t.Fatalf("re-archived edited message: %+v", got)
	}
}

// A delete takes the archived text away first; if recording the tombstone
// then fails, the message is left with no text, and history still reads.
func TestHistoryReadsPastAMissingArchivedText(t *testing.T) {
	f := newEventsFixture(t)
	ctx := context.Background()
	one := f.mustSend("alice", f.direct, wire.SendRequest{Content: "kept"})
	two := f.mustSend("alice", f.direct, wire.SendRequest{Content: "its blob goes"})
	if n, err := f.svc.ArchiveOnce(ctx, f.store.(server.ColdStore), -time.Hour); err != nil || n != 2 {
		t.Fatalf("archive: %d, %v", n, err)
	}
	if err := f.blobs.Delete(ctx, "cold/"+f.direct+"/"+strconv.FormatInt(two, 10)+".json"); err != nil {
		t.Fatal(err)
	}
	h, err := f.svc.History(ctx, "bob", f.direct, 0, 0, 10)
	if err != nil || len(h.Messages) != 2 {
		t.Fatalf("history with an archived text missing: %+v, %v", h, err)
	}
	if got := f.message("bob", f.direct, one); got.Content != "kept" {
		t.Fatalf("the other message: %+v", got)
	}
	if got := f.message("bob", f.direct, two); got.Content != "" {
		t.Fatalf("the message whose text is gone: %+v", got)
	}
}
