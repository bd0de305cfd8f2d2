// Package storetest is the conformance suite every server.Store passes. Give Run a
// factory that returns a fresh, empty store (a unique table prefix per call).
package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/wire"
)

// Factory returns an empty store; it registers its own cleanup with t.
type Factory func(t *testing.T) server.Store

// Options scale the suite to the backend (moto manages only a few hundred writes/s).
type Options struct {
	Concurrency int // concurrent appenders in the concurrency test (default 8)
	PerWorker   int // messages per appender (default 25)
}

// same compares messages field by field (Reactions makes them incomparable
// with ==).
func same(a, b server.Message) bool { return reflect.DeepEqual(a, b) }

var t0 = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

// Run runs every conformance test.
func Run(t *testing.T, newStore Factory, opt Options) {
	if opt.Concurrency == 0 {
		opt.Concurrency = 8
	}
	if opt.PerWorker == 0 {
		opt.PerWorker = 25
	}
	t.Run("Identity", func(t *testing.T) { testIdentity(t, newStore(t)) })
	t.Run("Users", func(t *testing.T) { testUsers(t, newStore(t)) })
	t.Run("Tokens", func(t *testing.T) { testTokens(t, newStore(t)) })
	t.Run("Administration", func(t *testing.T) { testAdministration(t, newStore(t)) })
	t.Run("Conversations", func(t *testing.T) { testConversations(t, newStore(t)) })
	t.Run("Append", func(t *testing.T) { testAppend(t, newStore(t)) })
	t.Run("NoteToSelf", func(t *testing.T) { testNoteToSelf(t, newStore(t)) })
	t.Run("AppendConcurrent", func(t *testing.T) { testAppendConcurrent(t, newStore(t), opt) })
	t.Run("AppendBatch", func(t *testing.T) {
		s := newStore(t)
		ba, ok := s.(server.BatchAppender)
		if !ok {
			t.Skipf("%T does not implement server.BatchAppender: the Service appends one message at a time", s)
		}
		testAppendBatch(t, s, ba)
	})
	t.Run("AttachmentPreview", func(t *testing.T) { testAttachmentPreview(t, newStore(t)) })
	t.Run("History", func(t *testing.T) { testHistory(t, newStore(t)) })
	t.Run("Status", func(t *testing.T) { testStatus(t, newStore(t)) })
	t.Run("Inbox", func(t *testing.T) { testInbox(t, newStore(t)) })
	t.Run("Mentions", func(t *testing.T) { testMentions(t, newStore(t)) })
	t.Run("MentionSetting", func(t *testing.T) { testMentionSetting(t, newStore(t)) })
	t.Run("MentionJoiners", func(t *testing.T) { testMentionJoiners(t, newStore(t)) })
	t.Run("MentionPages", func(t *testing.T) { testMentionPages(t, newStore(t)) })
	t.Run("NextSeq", func(t *testing.T) { testNextSeq(t, newStore(t)) })
	t.Run("SentMessages", func(t *testing.T) { testSentMessages(t, newStore(t)) })
	t.Run("CountMessages", func(t *testing.T) { testCountMessages(t, newStore(t)) })
	t.Run("MediaLinks", func(t *testing.T) { testMediaLinks(t, newStore(t)) })
	t.Run("MediaUploads", func(t *testing.T) { testMediaUploads(t, newStore(t)) })
	t.Run("NameKeys", func(t *testing.T) { testNameKeys(t, newStore(t)) })
	coldStore := func(t *testing.T) (server.Store, server.ColdStore) {
		s := newStore(t)
		cold, ok := s.(server.ColdStore)
		if !ok {
			t.Skipf("%T does not implement server.ColdStore: its messages stay hot", s)
		}
		return s, cold
	}
	t.Run("ColdStore", func(t *testing.T) {
		s, cold := coldStore(t)
		testColdStore(t, s, cold)
	})
	t.Run("ArchiveDue", func(t *testing.T) {
		s, cold := coldStore(t)
		testArchiveDue(t, s, cold)
	})
	t.Run("EditSeqs", func(t *testing.T) {
		s, cold := coldStore(t)
		testEditSeqs(t, s, cold)
	})
	t.Run("ColdStoreEvents", func(t *testing.T) {
		s, cold := coldStore(t)
		testColdStoreEvents(t, s, cold)
	})
	t.Run("Events", func(t *testing.T) { testEvents(t, newStore(t)) })
	t.Run("EventTargetChanged", func(t *testing.T) { testEventTargetChanged(t, newStore(t)) })
	t.Run("MembershipEvents", func(t *testing.T) { testMembershipEvents(t, newStore(t)) })
	t.Run("Channels", func(t *testing.T) { testChannels(t, newStore(t)) })
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want %v", err, target)
	}
}

func user(id string) server.User {
	return server.User{ID: id, DisplayName: "User " + id, PasswordHash: []byte("hash-" + id), CreatedAt: t0}
}

func testUsers(t *testing.T, s server.Store) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		if id, err := s.FirstUser(ctx); !errors.Is(err, server.ErrNotFound) {
			t.Fatalf("FirstUser of an empty store = %q, %v; want ErrNotFound", id, err)
		}
		u := user("alice")
		u.Admin = true
		must(t, s.CreateUser(ctx, u, server.Claim{First: true, Now: t0}))
		if id, err := s.FirstUser(ctx); err != nil || id != "alice" {
			t.Fatalf("FirstUser after alice claimed the server = %q, %v", id, err)
		}
		got, err := s.GetUser(ctx, "alice")
		must(t, err)
		if got.ID != "alice" || got.DisplayName != "User alice" || string(got.PasswordHash) != "hash-alice" || !got.Admin || !got.CreatedAt.Equal(t0) {
			t.Fatalf("got %+v", got)
		}
		name, status := "Alice A.", "busy"
		got, err = s.UpdateProfile(ctx, "alice", server.ProfileChange{DisplayName: &name})
		must(t, err)
		if got.DisplayName != name || got.Status != "" || got.HidePresence {
			t.Fatalf("after name update: %+v", got)
		}
		got, err = s.UpdateProfile(ctx, "alice", server.ProfileChange{Status: &status})
		must(t, err)
		if got.DisplayName != name || got.Status != status {
			t.Fatalf("after status update: %+v", got)
		}
		// The presence setting, on and off again, leaves the rest alone and is
		// what a later read finds.
		for _, hide := range []bool{true, false} {
			got, err = s.UpdateProfile(ctx, "alice", server.ProfileChange{HidePresence: &hide})
			must(t, err)
			if got.HidePresence != hide || got.DisplayName != name || got.Status != status {
				t.Fatalf("after hide_presence %v: %+v", hide, got)
			}
			if got, err = s.GetUser(ctx, "alice"); err != nil || got.HidePresence != hide {
				t.Fatalf("GetUser after hide_presence %v: %+v, %v", hide, got, err)
			}
		}
		must(t, s.CreateUser(ctx, user("open"), server.Claim{Now: t0}))
	})
	t.Run("ErrNotFirst", func(t *testing.T) {
		wantErr(t, s.CreateUser(ctx, user("second"), server.Claim{First: true, Now: t0}), server.ErrNotFirst)
		_, err := s.GetUser(ctx, "second")
		wantErr(t, err, server.ErrNotFound)
	})
	t.Run("ErrExists", func(t *testing.T) {
		wantErr(t, s.CreateUser(ctx, user("alice"), server.Claim{Now: t0}), server.ErrExists)
	})
	t.Run("Invite", func(t *testing.T) {
		must(t, s.PutInvite(ctx, server.Invite{Hash: "inv1", CreatedBy: "alice", ExpiresAt: t0.Add(time.Hour)}))
		must(t, s.PutInvite(ctx, server.Invite{Hash: "old", CreatedBy: "alice", ExpiresAt: t0.Add(-time.Second)}))
		wantErr(t, s.CreateUser(ctx, user("bob"), server.Claim{InviteHash: "nope", Now: t0}), server.ErrBadInvite)
		wantErr(t, s.CreateUser(ctx, user("bob"), server.Claim{InviteHash: "old", Now: t0}), server.ErrBadInvite)
		must(t, s.CreateUser(ctx, user("bob"), server.Claim{InviteHash: "inv1", Now: t0}))
		// Single use.
		wantErr(t, s.CreateUser(ctx, user("carol"), server.Claim{InviteHash: "inv1", Now: t0}), server.ErrBadInvite)
		_, err := s.GetUser(ctx, "carol")
		wantErr(t, err, server.ErrNotFound)
	})
	t.Run("ErrInviteKeptWhenUserExists", func(t *testing.T) {
		must(t, s.PutInvite(ctx, server.Invite{Hash: "inv2", CreatedBy: "alice", ExpiresAt: t0.Add(time.Hour)}))
		wantErr(t, s.CreateUser(ctx, user("bob"), server.Claim{InviteHash: "inv2", Now: t0}), server.ErrExists)
		must(t, s.CreateUser(ctx, user("dave"), server.Claim{InviteHash: "inv2", Now: t0}))
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := s.GetUser(ctx, "nobody")
		wantErr(t, err, server.ErrNotFound)
		name := "x"
		_, err = s.UpdateProfile(ctx, "nobody", server.ProfileChange{DisplayName: &name})
		wantErr(t, err, server.ErrNotFound)
	})
}

func testTokens(t *testing.T, s server.Store) {
	ctx := context.Background()
	// Real time: a store may compare expiry with its own clock.
	now := time.Now()
	must(t, s.PutToken(ctx, server.Token{Hash: "h1", UserID: "alice", ExpiresAt: now.Add(time.Hour)}))
	must(t, s.PutToken(ctx, server.Token{Hash: "h2", UserID: "alice", ExpiresAt: now.Add(-time.Minute)}))
	tok, err := s.GetToken(ctx, "h1")
	must(t, err)
	if tok.UserID != "alice" {
		t.Fatalf("token user = %q", tok.UserID)
	}
	_, err = s.GetToken(ctx, "h2")
	wantErr(t, err, server.ErrNotFound) // expired
	must(t, s.DeleteToken(ctx, "h1"))
	_, err = s.GetToken(ctx, "h1")
	wantErr(t, err, server.ErrNotFound)
	must(t, s.DeleteToken(ctx, "never-existed"))
}

func direct(a, b string) (server.Conversation, []server.Participant) {
	id := wire.DirectConversationID(a, b)
	return server.Conversation{ID: id, Type: wire.Direct, CreatedAt: t0},
		[]server.Participant{{ConversationID: id, UserID: a, Role: wire.RoleMember, JoinedAt: t0}, {ConversationID: id, UserID: b, Role: wire.RoleMember, JoinedAt: t0}}
}

func testConversations(t *testing.T, s server.Store) {
	ctx := context.Background()
	c, members := direct("alice", "bob")
	t.Run("OK", func(t *testing.T) {
		must(t, s.CreateConversation(ctx, c, members))
		got, err := s.GetConversation(ctx, c.ID)
		must(t, err)
		if got.ID != c.ID || got.Type != wire.Direct || got.LastSeq != 0 || !got.CreatedAt.Equal(t0) {
			t.Fatalf("got %+v", got)
		}
		ps, err := s.ListParticipants(ctx, c.ID)
		must(t, err)
		if len(ps) != 2 || ps[0].UserID != "alice" || ps[1].UserID != "bob" {
			t.Fatalf("participants %+v", ps)
		}
		p, err := s.GetParticipant(ctx, c.ID, "bob")
		must(t, err)
		if p.Role != wire.RoleMember || !p.JoinedAt.Equal(t0) {
			t.Fatalf("participant %+v", p)
		}
	})
	t.Run("ErrExists", func(t *testing.T) {
		wantErr(t, s.CreateConversation(ctx, c, members), server.ErrExists)
	})
	t.Run("Members", func(t *testing.T) {
		g := server.Conversation{ID: "g:team", Type: wire.Group, Name: "Team", CreatedAt: t0}
		must(t, s.CreateConversation(ctx, g, []server.Participant{{ConversationID: g.ID, UserID: "alice", Role: wire.RoleAdmin, JoinedAt: t0}}))
		must(t, s.AddParticipants(ctx, g.ID, []server.Participant{
			{ConversationID: g.ID, UserID: "bob", Role: wire.RoleMember, JoinedAt: t0},
			{ConversationID: g.ID, UserID: "alice", Role: wire.RoleMember, JoinedAt: t0}, // already there: kept as admin
		}))
		p, err := s.GetParticipant(ctx, g.ID, "alice")
		must(t, err)
		if p.Role != wire.RoleAdmin {
			t.Fatalf("re-adding changed the role to %q", p.Role)
		}
		must(t, s.RemoveParticipant(ctx, g.ID, "bob"))
		_, err = s.GetParticipant(ctx, g.ID, "bob")
		wantErr(t, err, server.ErrNotFound)
		wantErr(t, s.RemoveParticipant(ctx, g.ID, "bob"), server.ErrNotFound)
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := s.GetConversation(ctx, "g:none")
		wantErr(t, err, server.ErrNotFound)
		_, err = s.GetParticipant(ctx, c.ID, "carol")
		wantErr(t, err, server.ErrNotFound)
		wantErr(t, s.AddParticipants(ctx, "g:none", []server.Participant{{ConversationID: "g:none", UserID: "x", Role: wire.RoleMember, JoinedAt: t0}}), server.ErrNotFound)
	})
}

func msg(conv string, seq int64, sender, receiver string) server.Message {
	return server.Message{ConversationID: conv, SeqNo: seq, MessageID: fmt.Sprintf("m-%s-%d", sender, seq), SenderID: sender, ReceiverID: receiver,
		Content: fmt.Sprintf("hello %d", seq), Timestamp: t0.Add(time.Duration(seq) * time.Second)}
}

// testNoteToSelf: a user's direct conversation with themselves has one
// participant, and its messages have no receiver, so nothing is pending.
func testNoteToSelf(t *testing.T, s server.Store) {
	ctx := context.Background()
	id := wire.DirectConversationID("alice", "alice")
	c := server.Conversation{ID: id, Type: wire.Direct, CreatedAt: t0}
	must(t, s.CreateConversation(ctx, c, []server.Participant{{ConversationID: id, UserID: "alice", Role: wire.RoleMember, JoinedAt: t0}}))
	for i := int64(1); i <= 2; i++ {
		must(t, s.AppendMessage(ctx, msg(id, i, "alice", ""), nil))
	}
	got, err := s.ListMessages(ctx, id, 0, 10)
	must(t, err)
	if len(got) != 2 || got[0].SeqNo+got[1].SeqNo != 3 {
		t.Fatalf("stored %+v", got)
	}
	ps, err := s.ListParticipants(ctx, id)
	must(t, err)
	if len(ps) != 1 || ps[0].UserID != "alice" {
		t.Fatalf("participants %+v", ps)
	}
	st, err := s.ListStatuses(ctx, id, []string{"alice"})
	must(t, err)
	if len(st) != 1 || st[0].LastReadSeq != 2 || st[0].LastDeliveredSeq != 2 {
		t.Fatalf("statuses %+v", st)
	}
	pend, err := s.ListPending(ctx, "alice")
	must(t, err)
	if len(pend) != 0 {
		t.Fatalf("pending %+v, want none", pend)
	}
}

func testAppend(t *testing.T, s server.Store) {
	ctx := context.Background()
	c, members := direct("alice", "bob")
	must(t, s.CreateConversation(ctx, c, members))
	m1 := msg(c.ID, 1, "alice", "bob")
	m1.Attachment = "media/alice/abcdefghijklmnop" // kept through every read
	m1.AttachmentInfo = &wire.AttachmentInfo{Name: "plan.pdf", Type: "application/pdf", Size: 48213}
	t.Run("OK", func(t *testing.T) {
		must(t, s.AppendMessage(ctx, m1, []string{"bob"}))
		got, err := s.ListMessages(ctx, c.ID, 0, 10)
		must(t, err)
		if len(got) != 1 || !same(got[0], m1) {
			t.Fatalf("stored %+v, want %+v", got, m1)
		}
		conv, err := s.GetConversation(ctx, c.ID)
		must(t, err)
		if conv.LastSeq != 1 || conv.LastMessageBody != m1.Content || conv.LastMessageSender != "alice" || !conv.LastMessageAt.Equal(m1.Timestamp) {
			t.Fatalf("preview not updated: %+v", conv)
		}
		st, err := s.ListStatuses(ctx, c.ID, []string{"alice", "bob"})
		must(t, err)
		if st[0].LastReadSeq != 1 || st[0].LastDeliveredSeq != 1 || st[1].LastReadSeq != 0 || st[1].LastDeliveredSeq != 0 {
			t.Fatalf("statuses %+v", st)
		}
		pend, err := s.ListPending(ctx, "bob")
		must(t, err)
		if len(pend) != 1 || pend[0].ConversationID != c.ID || pend[0].FirstUndeliveredSeq != 1 {
			t.Fatalf("pending %+v", pend)
		}
	})
	t.Run("ErrDuplicate", func(t *testing.T) {
		again := m1
		again.SeqNo = 2
		again.Content = "changed"
		err := s.AppendMessage(ctx, again, []string{"bob"})
		var dup *server.DuplicateError
		if !errors.As(err, &dup) {
			t.Fatalf("error = %v, want *DuplicateError", err)
		}
		if !same(dup.Original, m1) {
			t.Fatalf("original = %+v, want %+v", dup.Original, m1)
		}
		got, _ := s.ListMessages(ctx, c.ID, 0, 10)
		if len(got) != 1 {
			t.Fatalf("duplicate stored: %d messages", len(got))
		}
	})
	t.Run("ErrDuplicateOtherSender", func(t *testing.T) {
		// Another member's message with alice's message_id is not stored, and
		// the original says whose the id is (the Service refuses it).
		theirs := msg(c.ID, 2, "bob", "alice")
		theirs.MessageID = m1.MessageID
		var dup *server.DuplicateError
		if err := s.AppendMessage(ctx, theirs, []string{"alice"}); !errors.As(err, &dup) || !same(dup.Original, m1) {
			t.Fatalf("error = %v, want *DuplicateError with alice's original %+v", err, m1)
		}
		if got, _ := s.ListMessages(ctx, c.ID, 0, 10); len(got) != 1 {
			t.Fatalf("stored %d messages, want 1", len(got))
		}
	})
	t.Run("ErrSeqTaken", func(t *testing.T) {
		other := msg(c.ID, 1, "bob", "alice")
		wantErr(t, s.AppendMessage(ctx, other, []string{"alice"}), server.ErrSeqTaken)
		got, _ := s.ListMessages(ctx, c.ID, 0, 10)
		if len(got) != 1 || !same(got[0], m1) {
			t.Fatalf("message overwritten: %+v", got)
		}
		// Nothing of the failed write leaks: alice has no pending row, bob's boundaries are untouched.
		pend, _ := s.ListPending(ctx, "alice")
		st, _ := s.ListStatuses(ctx, c.ID, []string{"bob"})
		if len(pend) != 0 || st[0].LastReadSeq != 0 {
			t.Fatalf("failed append left writes behind: pending %+v status %+v", pend, st)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		wantErr(t, s.AppendMessage(ctx, msg("g:none", 1, "alice", ""), nil), server.ErrNotFound)
	})
	t.Run("ErrSeqBehindLastSeq", func(t *testing.T) {
		m3 := msg(c.ID, 3, "bob", "alice")
		must(t, s.AppendMessage(ctx, m3, []string{"alice"}))
		// seq 2 is free but behind last_seq 3: storing it would put a message
		// behind a newer one, so it is refused like a taken seq.
		m2 := msg(c.ID, 2, "alice", "bob")
		wantErr(t, s.AppendMessage(ctx, m2, []string{"bob"}), server.ErrSeqTaken)
		conv, _ := s.GetConversation(ctx, c.ID)
		if conv.LastSeq != 3 || conv.LastMessageBody != m3.Content {
			t.Fatalf("preview after a refused append: %+v", conv)
		}
		got, _ := s.ListMessages(ctx, c.ID, 0, 10)
		if len(got) != 2 || got[0].SeqNo != 3 || got[1].SeqNo != 1 {
			t.Fatalf("messages: %+v", got)
		}
		// Bob replied at 3: he has implicitly read everything before.
		st, _ := s.ListStatuses(ctx, c.ID, []string{"bob"})
		if st[0].LastReadSeq != 3 {
			t.Fatalf("bob's implicit read = %d, want 3", st[0].LastReadSeq)
		}
	})
}

func testAppendBatch(t *testing.T, s server.Store, ba server.BatchAppender) {
	ctx := context.Background()
	c, members := direct("alice", "bob")
	must(t, s.CreateConversation(ctx, c, members))
	messages := func() []server.Message {
		got, err := s.ListMessages(ctx, c.ID, 0, 100)
		must(t, err)
		return got
	}
	m1, m2, m3 := msg(c.ID, 1, "alice", "bob"), msg(c.ID, 2, "alice", "bob"), msg(c.ID, 3, "alice", "bob")
	m5, m7 := msg(c.ID, 5, "alice", "bob"), msg(c.ID, 7, "alice", "bob")
	t.Run("OK", func(t *testing.T) {
		dups, err := ba.AppendMessages(ctx, []server.Message{m1, m2, m3}, []string{"bob"})
		must(t, err)
		if len(dups) != 3 || dups[0] != nil || dups[1] != nil || dups[2] != nil {
			t.Fatalf("dups = %v, want three nils", dups)
		}
		if got := messages(); len(got) != 3 || !same(got[0], m3) || !same(got[1], m2) || !same(got[2], m1) {
			t.Fatalf("stored %+v", got)
		}
		conv, err := s.GetConversation(ctx, c.ID)
		must(t, err)
		if conv.LastSeq != 3 || conv.LastMessageBody != m3.Content {
			t.Fatalf("preview is not the last of the batch: %+v", conv)
		}
		st, _ := s.ListStatuses(ctx, c.ID, []string{"alice", "bob"})
		if st[0].LastReadSeq != 3 || st[1].LastDeliveredSeq != 0 {
			t.Fatalf("statuses %+v", st)
		}
		pend, _ := s.ListPending(ctx, "bob")
		if len(pend) != 1 || pend[0].FirstUndeliveredSeq != 1 {
			t.Fatalf("pending %+v, want from seq 1", pend)
		}
	})
	t.Run("Resends", func(t *testing.T) {
		// A resend of m2 and a message_id twice in one batch: both answered with
		// their originals, the new one stored, no seq_no reused.
		again := m2
		again.SeqNo = 4
		twice := m5
		twice.SeqNo = 6
		dups, err := ba.AppendMessages(ctx, []server.Message{again, m5, twice, m7}, []string{"bob"})
		must(t, err)
		if dups[0] == nil || !same(dups[0].Original, m2) || dups[1] != nil || dups[2] == nil || !same(dups[2].Original, m5) || dups[3] != nil {
			t.Fatalf("dups = %v", dups)
		}
		got := messages()
		if len(got) != 5 || !same(got[0], m7) || !same(got[1], m5) || !same(got[2], m3) {
			t.Fatalf("stored %+v", got)
		}
	})
	t.Run("ErrSeqTaken", func(t *testing.T) {
		// The second is behind last_seq 7: nothing of the batch is stored.
		m8, m6 := msg(c.ID, 8, "bob", "alice"), msg(c.ID, 6, "bob", "alice")
		m6.MessageID = "m-bob-six"
		_, err := ba.AppendMessages(ctx, []server.Message{m6, m8}, []string{"alice"})
		wantErr(t, err, server.ErrSeqTaken)
		if got := messages(); len(got) != 5 || !same(got[0], m7) {
			t.Fatalf("a refused batch left rows: %+v", got)
		}
		pend, _ := s.ListPending(ctx, "alice")
		st, _ := s.ListStatuses(ctx, c.ID, []string{"bob"})
		if len(pend) != 0 || st[0].LastReadSeq != 0 {
			t.Fatalf("a refused batch left writes behind: pending %+v status %+v", pend, st)
		}
	})
	t.Run("OtherSendersID", func(t *testing.T) {
		// bob's batch with alice's m3 message_id: his other message is stored,
		// and the duplicate's original says whose the id is.
		theirs, next := msg(c.ID, 8, "bob", "alice"), msg(c.ID, 9, "bob", "alice")
		theirs.MessageID = m3.MessageID
		dups, err := ba.AppendMessages(ctx, []server.Message{theirs, next}, []string{"alice"})
		must(t, err)
		if dups[0] == nil || !same(dups[0].Original, m3) || dups[1] != nil {
			t.Fatalf("dups = %v, want alice's original for the first", dups)
		}
		if got := messages(); len(got) != 6 || !same(got[0], next) {
			t.Fatalf("stored %+v", got)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := ba.AppendMessages(ctx, []server.Message{msg("g:none", 1, "alice", ""), msg("g:none", 2, "alice", "")}, nil)
		wantErr(t, err, server.ErrNotFound)
	})
}

// testAppendConcurrent: appenders race for numbers from one counter, as nodes
// sharing a Sequencer do; a refused number is replaced by a fresh one. Every
// message is stored once, and stored order is seq order.
func testAppendConcurrent(t *testing.T, s server.Store, opt Options) {
	ctx := context.Background()
	g := server.Conversation{ID: "g:busy", Type: wire.Group, CreatedAt: t0}
	must(t, s.CreateConversation(ctx, g, []server.Participant{{ConversationID: g.ID, UserID: "a", Role: wire.RoleAdmin, JoinedAt: t0}}))
	var counter atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, opt.Concurrency)
	for w := range opt.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range opt.PerWorker {
				for {
					m := msg(g.ID, counter.Add(1), "a", "")
					m.MessageID = fmt.Sprintf("w%d-%d", w, i)
					err := s.AppendMessage(ctx, m, nil)
					if errors.Is(err, server.ErrSeqTaken) {
						continue // another appender got ahead: take a new number
					}
					if err != nil {
						errs <- err
						return
					}
					break
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	total := opt.Concurrency * opt.PerWorker
	got, err := s.ListMessagesAfter(ctx, g.ID, 0, total+10)
	must(t, err)
	if len(got) != total {
		t.Fatalf("stored %d messages, want %d", len(got), total)
	}
	ids := map[string]bool{}
	for i, m := range got {
		if i > 0 && m.SeqNo <= got[i-1].SeqNo {
			t.Fatalf("seq %d after %d", m.SeqNo, got[i-1].SeqNo)
		}
		if ids[m.MessageID] {
			t.Fatalf("message %s stored twice", m.MessageID)
		}
		ids[m.MessageID] = true
	}
	conv, _ := s.GetConversation(ctx, g.ID)
	if conv.LastSeq != got[len(got)-1].SeqNo {
		t.Fatalf("last_seq = %d, newest message %d", conv.LastSeq, got[len(got)-1].SeqNo)
	}
}

// An attachment sent without text leaves a mark as the conversation's preview,
// one message at a time and in a batch.
func testAttachmentPreview(t *testing.T, s server.Store) {
	ctx := context.Background()
	c, members := direct("alice", "bob")
	must(t, s.CreateConversation(ctx, c, members))
	preview := func(want string) {
		t.Helper()
		conv, err := s.GetConversation(ctx, c.ID)
		must(t, err)
		if conv.LastMessageBody != want {
			t.Fatalf("preview %q, want %q", conv.LastMessageBody, want)
		}
	}
	pic := msg(c.ID, 1, "alice", "bob")
	pic.Content, pic.Attachment = "", "media/alice/abcdefghijklmnop"
	must(t, s.AppendMessage(ctx, pic, []string{"bob"}))
	preview("[attachment]")
	must(t, s.AppendMessage(ctx, msg(c.ID, 2, "bob", "alice"), []string{"alice"}))
	preview("hello 2")
	ba, ok := s.(server.BatchAppender)
	if !ok {
		return
	}
	text, pic2 := msg(c.ID, 3, "alice", "bob"), msg(c.ID, 4, "alice", "bob")
	pic2.Content, pic2.Attachment = "", "media/alice/qrstuvwxyzabcdef"
	if _, err := ba.AppendMessages(ctx, []server.Message{text, pic2}, []string{"bob"}); err != nil {
		t.Fatal(err)
	}
	preview("[attachment]")
}

func testHistory(t *testing.T, s server.Store) {
	ctx := context.Background()
	c, members := direct("alice", "bob")
	must(t, s.CreateConversation(ctx, c, members))
	const n = 23
	for i := int64(1); i <= n; i++ {
		must(t, s.AppendMessage(ctx, msg(c.ID, i, "alice", "bob"), []string{"bob"}))
	}
	// Pages of 10 newest first, no gap, no repeat.
	var seen []int64
	before := int64(0)
	for {
		page, err := s.ListMessages(ctx, c.ID, before, 10)
		must(t, err)
		if len(page) == 0 {
			break
		}
		for _, m := range page {
			seen = append(seen, m.SeqNo)
		}
		before = page[len(page)-1].SeqNo
	}
	if len(seen) != n {
		t.Fatalf("paged %d messages, want %d: %v", len(seen), n, seen)
	}
	for i, seq := range seen {
		if seq != int64(n-i) {
			t.Fatalf("page order broken at %d: %v", i, seen)
		}
	}
	after, err := s.ListMessagesAfter(ctx, c.ID, 20, 10)
	must(t, err)
	if len(after) != 3 || after[0].SeqNo != 21 || after[2].SeqNo != 23 {
		t.Fatalf("after 20: %+v", after)
	}
	none, err := s.ListMessages(ctx, "g:none", 0, 10)
	must(t, err)
	if len(none) != 0 {
		t.Fatalf("unknown conversation has messages")
	}
}

func testStatus(t *testing.T, s server.Store) {
	ctx := context.Background()
	c, members := direct("alice", "bob")
	must(t, s.CreateConversation(ctx, c, members))
	for i := int64(1); i <= 5; i++ {
		must(t, s.AppendMessage(ctx, msg(c.ID, i, "alice", "bob"), []string{"bob"}))
	}
	t.Run("DeliveredThenRead", func(t *testing.T) {
		st, changed, err := s.AdvanceStatus(ctx, "bob", c.ID, 3, 0)
		must(t, err)
		if !changed || st.LastDeliveredSeq != 3 || st.LastReadSeq != 0 {
			t.Fatalf("after ack 3: %+v changed=%v", st, changed)
		}
		pend, _ := s.ListPending(ctx, "bob")
		if len(pend) != 1 || pend[0].FirstUndeliveredSeq != 4 {
			t.Fatalf("pending after partial ack: %+v", pend)
		}
		st, changed, err = s.AdvanceStatus(ctx, "bob", c.ID, 0, 4) // read implies delivered
		must(t, err)
		if !changed || st.LastDeliveredSeq != 4 || st.LastReadSeq != 4 {
			t.Fatalf("after read 4: %+v", st)
		}
	})
	t.Run("NeverLowered", func(t *testing.T) {
		st, changed, err := s.AdvanceStatus(ctx, "bob", c.ID, 2, 1)
		must(t, err)
		if changed || st.LastDeliveredSeq != 4 || st.LastReadSeq != 4 {
			t.Fatalf("boundaries moved back: %+v changed=%v", st, changed)
		}
	})
	t.Run("ClearsPending", func(t *testing.T) {
		_, _, err := s.AdvanceStatus(ctx, "bob", c.ID, 5, 0)
		must(t, err)
		pend, _ := s.ListPending(ctx, "bob")
		if len(pend) != 0 {
			t.Fatalf("pending not cleared: %+v", pend)
		}
		// A new message makes it pending again, from its own seq.
		must(t, s.AppendMessage(ctx, msg(c.ID, 6, "alice", "bob"), []string{"bob"}))
		pend, _ = s.ListPending(ctx, "bob")
		if len(pend) != 1 || pend[0].FirstUndeliveredSeq != 6 {
			t.Fatalf("pending after new message: %+v", pend)
		}
	})
	t.Run("AckBelowImplicitReadClearsPending", func(t *testing.T) {
		// Carol's message is pending for dave; dave replies (his boundary moves to
		// the reply by implicit read), then acks carol's message: the ack moves no
		// boundary but must clear the pending row, or it is delivered again on
		// every reconnect.
		cd, cdm := direct("carol", "dave")
		must(t, s.CreateConversation(ctx, cd, cdm))
		must(t, s.AppendMessage(ctx, msg(cd.ID, 1, "carol", "dave"), []string{"dave"}))
		must(t, s.AppendMessage(ctx, msg(cd.ID, 2, "dave", "carol"), []string{"carol"}))
		st, changed, err := s.AdvanceStatus(ctx, "dave", cd.ID, 1, 0)
		must(t, err)
		if changed || st.LastDeliveredSeq != 2 {
			t.Fatalf("ack below the implicit read: %+v changed=%v", st, changed)
		}
		pend, err := s.ListPending(ctx, "dave")
		must(t, err)
		for _, p := range pend {
			if p.ConversationID == cd.ID {
				t.Fatalf("dave's pending row survived his ack: %+v", p)
			}
		}
	})
	t.Run("AckBelowImplicitReadKeepsTheRest", func(t *testing.T) {
		// Erin's 1 and 2 are pending for frank; frank replies at 3 having got
		// only 1 (2 is still on its way), and acks 1 with the reply, as a
		// protocol-2 client does. Only 1 is his ack's to clear: 2 stays pending,
		// so it comes again if its live copy is lost.
		ef, efm := direct("erin", "frank")
		must(t, s.CreateConversation(ctx, ef, efm))
		must(t, s.AppendMessage(ctx, msg(ef.ID, 1, "erin", "frank"), []string{"frank"}))
		must(t, s.AppendMessage(ctx, msg(ef.ID, 2, "erin", "frank"), []string{"frank"}))
		must(t, s.AppendMessage(ctx, msg(ef.ID, 3, "frank", "erin"), []string{"erin"}))
		_, _, err := s.AdvanceStatus(ctx, "frank", ef.ID, 1, 0)
		must(t, err)
		pend, err := s.ListPending(ctx, "frank")
		must(t, err)
		var got []server.Pending
		for _, p := range pend {
			if p.ConversationID == ef.ID {
				got = append(got, p)
			}
		}
		if len(got) != 1 || got[0].FirstUndeliveredSeq != 2 {
			t.Fatalf("frank's pending after acking 1 below his reply at 3: %+v, want from 2", got)
		}
	})
	t.Run("NoRowMeansZero", func(t *testing.T) {
		st, err := s.ListStatuses(ctx, c.ID, []string{"carol"})
		must(t, err)
		if len(st) != 1 || st[0].UserID != "carol" || st[0].LastDeliveredSeq != 0 {
			t.Fatalf("%+v", st)
		}
	})
}

func testInbox(t *testing.T, s server.Store) {
	ctx := context.Background()
	ab, abm := direct("alice", "bob")
	ac, acm := direct("alice", "carol")
	must(t, s.CreateConversation(ctx, ab, abm))
	must(t, s.CreateConversation(ctx, ac, acm))
	must(t, s.AppendMessage(ctx, msg(ab.ID, 1, "bob", "alice"), []string{"alice"}))
	must(t, s.AppendMessage(ctx, msg(ab.ID, 2, "bob", "alice"), []string{"alice"}))
	m := msg(ac.ID, 1, "carol", "alice")
	m.Timestamp = t0.Add(time.Hour) // newest
	must(t, s.AppendMessage(ctx, m, []string{"alice"}))
	_, _, err := s.AdvanceStatus(ctx, "alice", ab.ID, 2, 1)
	must(t, err)

	in, err := s.Inbox(ctx, "alice", 10)
	must(t, err)
	if len(in) != 2 || in[0].Conversation.ID != ac.ID || in[1].Conversation.ID != ab.ID {
		t.Fatalf("inbox order: %+v", in)
	}
	if in[1].Status.LastReadSeq != 1 || in[1].Status.LastDeliveredSeq != 2 || in[1].Conversation.LastSeq != 2 || in[1].Conversation.LastMessageSender != "bob" {
		t.Fatalf("entry: %+v", in[1])
	}
	one, err := s.Inbox(ctx, "alice", 1)
	must(t, err)
	if len(one) != 1 || one[0].Conversation.ID != ac.ID {
		t.Fatalf("limit 1: %+v", one)
	}
	entries, err := s.InboxEntries(ctx, "alice", []string{ab.ID, "g:none", ac.ID})
	must(t, err)
	if len(entries) != 2 || entries[0].Conversation.ID != ab.ID || entries[1].Conversation.ID != ac.ID {
		t.Fatalf("entries: %+v", entries)
	}
	bobs, err := s.InboxEntries(ctx, "bob", []string{ac.ID})
	must(t, err)
	if len(bobs) != 0 {
		t.Fatalf("bob sees a conversation he is not in: %+v", bobs)
	}
}

func testNextSeq(t *testing.T, s server.Store) {
	ctx := context.Background()
	c, members := direct("alice", "bob")
	must(t, s.CreateConversation(ctx, c, members))
	must(t, s.AppendMessage(ctx, msg(c.ID, 1, "alice", "bob"), nil))
	must(t, s.AppendMessage(ctx, msg(c.ID, 2, "alice", "bob"), nil))
	a, err := s.NextSeq(ctx, c.ID)
	must(t, err)
	b, err := s.NextSeq(ctx, c.ID)
	must(t, err)
	if a != 3 || b != 4 {
		t.Fatalf("NextSeq = %d, %d; want 3, 4 (above last_seq)", a, b)
	}
	_, err = s.NextSeq(ctx, "g:none")
	wantErr(t, err, server.ErrNotFound)
}

// testSentMessages: the first answers to resends, read before a seq_no is taken.
func testSentMessages(t *testing.T, s server.Store) {
	ctx := context.Background()
	c, members := direct("alice", "bob")
	must(t, s.CreateConversation(ctx, c, members))
	m1, m2 := msg(c.ID, 1, "alice", "bob"), msg(c.ID, 2, "bob", "alice")
	must(t, s.AppendMessage(ctx, m1, []string{"bob"}))
	must(t, s.AppendMessage(ctx, m2, []string{"alice"}))
	got, err := s.SentMessages(ctx, c.ID, []string{m2.MessageID, "never-sent", m1.MessageID, m1.MessageID})
	must(t, err)
	if len(got) != 2 {
		t.Fatalf("found %d of 2 stored message_ids: %+v", len(got), got)
	}
	for _, m := range []server.Message{m1, m2} {
		g := got[m.MessageID]
		// The sender tells a resend from another member's send of the id.
		if g.SeqNo != m.SeqNo || g.MessageID != m.MessageID || g.SenderID != m.SenderID || !g.Timestamp.Equal(m.Timestamp) {
			t.Fatalf("%s: got %+v, want seq %d by %s at %v", m.MessageID, g, m.SeqNo, m.SenderID, m.Timestamp)
		}
	}
	if got, err := s.SentMessages(ctx, "g:nowhere", []string{m1.MessageID}); err != nil || len(got) != 0 {
		t.Fatalf("other conversation: %+v, %v", got, err)
	}
	if got, err := s.SentMessages(ctx, c.ID, nil); err != nil || len(got) != 0 {
		t.Fatalf("no ids: %+v, %v", got, err)
	}
}

// testCountMessages: unread counts count stored messages; a seq_no with no
// message (a write that failed after its number was taken) is not counted.
func testCountMessages(t *testing.T, s server.Store) {
	ctx := context.Background()
	c, members := direct("alice", "bob")
	must(t, s.CreateConversation(ctx, c, members))
	for _, seq := range []int64{1, 2, 4, 5, 9} { // 3, 6, 7 and 8 are gaps
		must(t, s.AppendMessage(ctx, msg(c.ID, seq, "alice", "bob"), []string{"bob"}))
	}
	for _, tc := range []struct {
		after, upTo int64
		limit, want int
	}{
		{0, 9, 100, 5}, {2, 9, 100, 3}, {5, 9, 100, 1}, {9, 9, 100, 0}, {0, 9, 2, 2}, {2, 8, 100, 2}, {5, 8, 100, 0},
	} {
		n, err := s.CountMessages(ctx, c.ID, tc.after, tc.upTo, tc.limit)
		must(t, err)
		if n != tc.want {
			t.Errorf("CountMessages(after %d, up to %d, limit %d) = %d, want %d", tc.after, tc.upTo, tc.limit, n, tc.want)
		}
	}
}

// testMediaLinks: which conversations a media_id was sent in (who may fetch it).
func testMediaLinks(t *testing.T, s server.Store) {
	ctx := context.Background()
	id := "media/alice/abcdefghijklmnop"
	got, err := s.MediaConversations(ctx, id)
	must(t, err)
	if len(got) != 0 {
		t.Fatalf("unlinked media in %v", got)
	}
	// An id never reserved cannot be sent.
	if _, err := s.LinkMedia(ctx, id, "g:two", "m1"); !errors.Is(err, server.ErrNotFound) {
		t.Fatalf("LinkMedia of an unreserved upload = %v, want ErrNotFound", err)
	}
	reserve(t, s, server.MediaUpload{MediaID: id, Owner: "alice", Size: 10, CreatedAt: t0})
	reserve(t, s, server.MediaUpload{MediaID: "media/alice/other", Owner: "alice", Size: 10, CreatedAt: t0})
	linkMedia(t, s, id, "g:two", "m1")
	linkMedia(t, s, id, "dm:alice:bob", "m2")
	linkMedia(t, s, id, "g:two", "m1") // a resend links again: no error, no second row
	linkMedia(t, s, "media/alice/other", "g:three", "m3")
	got, err = s.MediaConversations(ctx, id)
	must(t, err)
	if len(got) != 2 || got[0] != "dm:alice:bob" || got[1] != "g:two" {
		t.Fatalf("media conversations %v, want [dm:alice:bob g:two]", got)
	}
}

// testIdentity: a store has an id from the start, keeps it, and a rotation
// replaces it for good; the users are not touched by it.
func testIdentity(t *testing.T, s server.Store) {
	ctx := context.Background()
	id, err := s.StoreID(ctx)
	if err != nil || len(id) < 16 {
		t.Fatalf("StoreID of a new store: %q, %v", id, err)
	}
	if again, err := s.StoreID(ctx); err != nil || again != id {
		t.Fatalf("StoreID again: %q, %v; want %q", again, err, id)
	}
	if err := s.CreateUser(ctx, server.User{ID: "alice", DisplayName: "Alice", PasswordHash: []byte("hash"), CreatedAt: t0}, server.Claim{First: true}); err != nil {
		t.Fatal(err)
	}
	rotated, err := s.RotateStoreID(ctx)
	if err != nil || rotated == id || len(rotated) < 16 {
		t.Fatalf("RotateStoreID: %q, %v (was %q)", rotated, err, id)
	}
	if now, err := s.StoreID(ctx); err != nil || now != rotated {
		t.Fatalf("StoreID after the rotation: %q, %v; want %q", now, err, rotated)
	}
	// The identity is no account: the administration's list shows users only.
	us, err := s.ListUsers(ctx)
	if err != nil || len(us) != 1 || us[0].ID != "alice" {
		t.Fatalf("ListUsers beside the identity: %+v, %v", us, err)
	}
}
