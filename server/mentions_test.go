package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/inmem"
	"github.com/chatterm/chat/server/webhook"
	"github.com/chatterm/chat/wire"
)

// mentionsFixture is eventsFixture with dave, who is in no conversation, and
// a clock that never shows one time twice, so that every message has a time
// of its own (GET /v1/mentions pages by time); it keeps to the real time, which
// the delivery worker's ticker goes by.
func newMentionsFixture(t *testing.T, pusher server.Pusher) *eventsFixture {
	t.Helper()
	var mu sync.Mutex
	var last time.Time
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		last = last.Add(time.Millisecond)
		if now := time.Now(); now.After(last) {
			last = now
		}
		return last
	}
	store := openStore(t)
	cfg := server.Config{SendRate: -1, Now: clock, RedeliverAfter: 20 * time.Millisecond, PasswordCost: 4, Registration: server.RegistrationOpen,
		Backends: server.Backends{Store: store, Sequencer: inmem.NewSequencer(), Rate: inmem.NewRateLimiter(time.Now),
			Inbox: inmem.NewInboxIndex(100), Profiles: inmem.NewProfileCache(time.Hour, time.Minute, time.Now),
			Registry: inmem.NewRegistry(), Broker: inmem.NewBroker(), Pusher: pusher}}
	svc, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Shutdown(context.Background()) })
	ctx := context.Background()
	for _, u := range []string{"alice", "bob", "carol", "dave"} {
		if _, err := svc.Register(ctx, wire.RegisterRequest{UserID: u, Password: "password-" + u}, ""); err != nil {
			t.Fatal(err)
		}
	}
	g, _, err := svc.CreateConversation(ctx, "alice", wire.CreateConversationRequest{Type: wire.Group, Name: "team", Members: []string{"bob", "carol"}})
	if err != nil {
		t.Fatal(err)
	}
	return &eventsFixture{t: t, svc: svc, store: store, direct: wire.DirectConversationID("alice", "bob"), grp: g.ConversationID}
}

// TestMentionsResolvedAtSend: members named and @all are kept with the
// message; a non-member, an unknown name, the sender, and @all in a direct
// conversation stay plain text; an edit keeps the mentions the message was
// sent with.
func TestMentionsResolvedAtSend(t *testing.T) {
	f := newMentionsFixture(t, nil)
	seq := f.mustSend("alice", f.grp, wire.SendRequest{Content: "@bob @dave @alice @nobody and @all, see bob@example.com"})
	if got := f.message("carol", f.grp, seq).Mentions; !slices.Equal(got, []string{"bob", wire.MentionAll}) {
		t.Fatalf("group mentions %q, want bob and @all", got)
	}
	dm := f.mustSend("alice", f.direct, wire.SendRequest{Content: "@all @here @bob"})
	if got := f.message("bob", f.direct, dm).Mentions; !slices.Equal(got, []string{"bob"}) {
		t.Fatalf("direct mentions %q, want bob only", got)
	}
	f.mustSend("alice", f.grp, wire.SendRequest{Kind: wire.KindEdit, TargetSeq: seq, Content: "now @carol only"})
	if m := f.message("carol", f.grp, seq); !slices.Equal(m.Mentions, []string{"bob", wire.MentionAll}) || m.Content != "now @carol only" {
		t.Fatalf("after an edit: %q %q", m.Content, m.Mentions)
	}
}

// TestMentionCounts: the inbox counts each member's unread mentions, the
// read boundary clears them, and the sender gets none for their own.
func TestMentionCounts(t *testing.T) {
	f := newMentionsFixture(t, nil)
	first := f.mustSend("alice", f.grp, wire.SendRequest{Content: "@bob look"})
	f.mustSend("alice", f.grp, wire.SendRequest{Content: "@here standup"})
	f.mustSend("carol", f.grp, wire.SendRequest{Content: "plain"})
	counts := func() [3]int64 {
		return [3]int64{f.inbox("alice", f.grp).Mentions, f.inbox("bob", f.grp).Mentions, f.inbox("carol", f.grp).Mentions}
	}
	// carol's own message moved her read boundary past the @here.
	if got := counts(); got != [3]int64{0, 2, 0} {
		t.Fatalf("mentions (alice, bob, carol) = %v, want [0 2 0]", got)
	}
	if _, err := f.svc.Advance(context.Background(), "bob", f.grp, 0, first, nil); err != nil {
		t.Fatal(err)
	}
	if got := counts(); got != [3]int64{0, 1, 0} {
		t.Fatalf("after bob read the first: %v, want [0 1 0]", got)
	}
}

// TestMentionsList: GET /v1/mentions lists the messages mentioning the
// caller across conversations, newest first, in pages; never their own, or a
// conversation's messages that do not mention them.
func TestMentionsList(t *testing.T) {
	f := newMentionsFixture(t, nil)
	a := f.mustSend("alice", f.grp, wire.SendRequest{Content: "@bob one"})
	f.mustSend("alice", f.grp, wire.SendRequest{Content: "not for bob"})
	b := f.mustSend("alice", f.direct, wire.SendRequest{Content: "@bob two"})
	f.mustSend("bob", f.grp, wire.SendRequest{Content: "@all from bob"})
	c := f.mustSend("carol", f.grp, wire.SendRequest{Content: "@all three"})
	ctx := context.Background()
	page, err := f.svc.Mentions(ctx, "bob", wire.MentionCursor{}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Mentions) != 2 || page.Mentions[0].SeqNo != c || page.Mentions[0].ConversationID != f.grp ||
		page.Mentions[1].SeqNo != b || page.Mentions[1].ConversationID != f.direct || page.NextBefore.IsZero() {
		t.Fatalf("first page: %+v", page)
	}
	next, err := wire.ParseMentionCursor(page.Next)
	if err != nil {
		t.Fatalf("next %q: %v", page.Next, err)
	}
	rest, err := f.svc.Mentions(ctx, "bob", next, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(rest.Mentions) != 1 || rest.Mentions[0].SeqNo != a || !rest.NextBefore.IsZero() || rest.Next != "" {
		t.Fatalf("second page: %+v", rest)
	}
	// An older client's before= (the last listed time) pages the same here,
	// where no two mentions share a time.
	if old, err := f.svc.Mentions(ctx, "bob", wire.MentionCursor{Time: page.NextBefore}, 2); err != nil || len(old.Mentions) != 1 || old.Mentions[0].SeqNo != a {
		t.Fatalf("second page by before=: %+v, %v", old, err)
	}
	if none, err := f.svc.Mentions(ctx, "dave", wire.MentionCursor{}, 10); err != nil || len(none.Mentions) != 0 {
		t.Fatalf("dave's mentions: %+v, %v", none, err)
	}
	if _, err := f.svc.Mentions(ctx, "bob", wire.MentionCursor{}, wire.MaxMentionsPage+1); !isCode(err, wire.CodeInvalid) {
		t.Fatalf("a page too large: %v", err)
	}
}

func isCode(err error, code wire.Code) bool {
	we, ok := err.(*wire.Error)
	return ok && we.Code == code
}

// TestMentionPushesToAnOfflineMember: the push for a member with no
// connection says it is a mention (the webhook's title and priority).
func TestMentionPushesToAnOfflineMember(t *testing.T) {
	got := make(chan *http.Request, 16)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r }))
	defer hook.Close()
	p, err := webhook.New(webhook.Config{URL: hook.URL + "/{user}"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	f := newMentionsFixture(t, p)
	f.mustSend("alice", f.grp, wire.SendRequest{Content: "@carol are you there?"})
	seen := map[string]string{}
	deadline := time.After(10 * time.Second)
	for len(seen) < 2 {
		select {
		case r := <-got:
			seen[r.URL.Path] = r.Header.Get("X-Chat-Mention") + "|" + r.Header.Get("Title")
		case <-deadline:
			t.Fatalf("pushes so far: %v", seen)
		}
	}
	if seen["/carol"] != "1|alice mentioned you" || seen["/bob"] != "|New message from alice" {
		t.Fatalf("pushes: %v", seen)
	}
}

// A mention followed by small talk in the same grace period still pushes as
// a mention: the push is the newest mention among what waits, not the newest
// message.
func TestMentionPushesBeforeLaterMessages(t *testing.T) {
	got := make(chan *http.Request, 16)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r }))
	defer hook.Close()
	p, err := webhook.New(webhook.Config{URL: hook.URL + "/{user}"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	f := newMentionsFixture(t, p)
	f.mustSend("alice", f.grp, wire.SendRequest{Content: "@carol can you review the release notes?"})
	f.mustSend("alice", f.grp, wire.SendRequest{Content: "no rush"})
	f.mustSend("alice", f.grp, wire.SendRequest{Content: "thanks!"})
	deadline := time.After(10 * time.Second)
	for {
		select {
		case r := <-got:
			if r.URL.Path != "/carol" {
				continue
			}
			// The first push to carol: whether it covers all three messages
			// or only the first, it is the mention.
			if r.Header.Get("X-Chat-Mention") != "1" || r.Header.Get("Title") != "alice mentioned you" {
				t.Fatalf("carol's push: mention %q, title %q; want the mention", r.Header.Get("X-Chat-Mention"), r.Header.Get("Title"))
			}
			return
		case <-deadline:
			t.Fatal("no push to carol")
		}
	}
}

// TestMentionAllForAdmins: a group may keep @all and @here for its admins; a
// member's message with either is then refused (forbidden) and stores
// nothing, while an admin's goes through; only admins change the rule.
func TestMentionAllForAdmins(t *testing.T) {
	f := newMentionsFixture(t, nil)
	ctx := context.Background()
	f.mustSend("bob", f.grp, wire.SendRequest{Content: "@all before the rule"})
	if _, err := f.svc.SetMentionSetting(ctx, "bob", f.grp, wire.MentionSetting{AllAdminsOnly: true}); !isCode(err, wire.CodeForbidden) {
		t.Fatalf("a member set the rule: %v", err)
	}
	if _, err := f.svc.SetMentionSetting(ctx, "alice", f.grp, wire.MentionSetting{AllAdminsOnly: true}); err != nil {
		t.Fatal(err)
	}
	if got, err := f.svc.MentionSetting(ctx, "carol", f.grp); err != nil || !got.AllAdminsOnly {
		t.Fatalf("carol reads the rule: %+v, %v", got, err)
	}
	last := f.inbox("bob", f.grp).LastSeq
	f.wantCode("bob", f.grp, wire.SendRequest{Content: "@here lunch?"}, wire.CodeMentionAllAdminsOnly)
	if e := f.inbox("bob", f.grp); e.LastSeq != last {
		t.Fatalf("a refused send was stored: last_seq %d, was %d", e.LastSeq, last)
	}
	f.mustSend("bob", f.grp, wire.SendRequest{Content: "@alice lunch?"}) // a member named is fine
	seq := f.mustSend("alice", f.grp, wire.SendRequest{Content: "@all lunch!"})
	if got := f.message("bob", f.grp, seq).Mentions; !slices.Equal(got, []string{wire.MentionAll}) {
		t.Fatalf("the admin's @all: %q", got)
	}
	f.mustSend("alice", f.direct, wire.SendRequest{Content: "hi"})
	if _, err := f.svc.SetMentionSetting(ctx, "alice", f.direct, wire.MentionSetting{AllAdminsOnly: true}); !isCode(err, wire.CodeInvalid) {
		t.Fatalf("a rule for a direct conversation: %v", err)
	}
}
