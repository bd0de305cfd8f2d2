package tui

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/localstore"
	"github.com/chatterm/chat/wire"
)

// fakeBackend is an in-memory Backend for the model tests. The client package
// has its own tests against the real server; here only the screens are tested.
type fakeBackend struct {
	mu     sync.Mutex
	user   string
	server string
	inbox  []wire.InboxEntry
	msgs   map[string][]wire.Message // ascending seq
	// searchBacklog counts cached messages not yet searchable.
	searchBacklog int
	pending       map[string][]wire.Message
	statuses      map[string][]wire.MemberStatus
	convs         map[string]wire.Conversation
	channels      []wire.Conversation // the server's, joined or not
	left          []string            // channels Leave was asked to leave
	events        chan client.Event
	now           time.Time
	typing        []string          // conversations Typing was called for
	refused       map[string]string // message_id → why the server refused it
	muted         map[string]bool
	// kept holds drafts and input history: the real cache, as the client
	// keeps them, so a test can start a second Model on what the first left.
	kept         *localstore.Store
	presence     map[string][]wire.MemberPresence // by conversation
	profiles     map[string]wire.Profile          // by user; none: not found
	profileCalls []string

	sends        []wire.Message
	saved        []string // media ids SaveMedia was asked for
	reads        map[string]int64
	historyCalls []int64
	logins       []string
	loginErr     error
	historyGate  chan struct{} // when set, older pages wait for it
	retries      int
	nextID       int
}

func newFakeBackend(user string, now time.Time) *fakeBackend {
	// The real cache, in memory: a test that restarts the TUI gives the
	// second Model the same backend.
	kept, err := localstore.Open(context.Background(), ":memory:", localstore.Options{UserID: cmp.Or(user, "nobody")})
	if err != nil {
		panic(err)
	}
	return &fakeBackend{kept: kept,
		user: user, server: "http://chat.test", now: now,
		msgs: map[string][]wire.Message{}, pending: map[string][]wire.Message{},
		statuses: map[string][]wire.MemberStatus{}, convs: map[string]wire.Conversation{},
		events: make(chan client.Event), reads: map[string]int64{},
	}
}

func (f *fakeBackend) Session() (string, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.user, f.server
}

func (f *fakeBackend) Login(_ context.Context, server, user, password string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logins = append(f.logins, "login "+server+" "+user+" "+password)
	if f.loginErr != nil {
		return f.loginErr
	}
	f.user, f.server = user, server
	return nil
}

func (f *fakeBackend) Register(_ context.Context, server, user, password, invite string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logins = append(f.logins, "register "+server+" "+user+" "+password+" "+invite)
	if f.loginErr != nil {
		return f.loginErr
	}
	f.user, f.server = user, server
	return nil
}

func (f *fakeBackend) Inbox(context.Context) ([]wire.InboxEntry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.inbox), nil
}

func (f *fakeBackend) History(_ context.Context, id string, before int64, limit int) (Page, error) {
	f.mu.Lock()
	gate := f.historyGate
	f.historyCalls = append(f.historyCalls, before)
	f.mu.Unlock()
	if gate != nil && before > 0 {
		<-gate
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var sel []wire.Message
	for _, m := range f.msgs[id] {
		if before == 0 || m.SeqNo < before {
			sel = append(sel, m)
		}
	}
	if len(sel) > limit {
		sel = sel[len(sel)-limit:]
	}
	p := Page{Messages: slices.Clone(sel), More: len(sel) > 0 && sel[0].SeqNo > 1}
	if before == 0 {
		p.Pending = slices.Clone(f.pending[id])
		p.Refused = f.refused
	}
	return p, nil
}

func (f *fakeBackend) Statuses(_ context.Context, id string) ([]wire.MemberStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.statuses[id]), nil
}

func (f *fakeBackend) Conversation(_ context.Context, id string) (wire.Conversation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.convs[id]
	if !ok {
		return c, wire.Errorf(wire.CodeNotFound, "no conversation %s", id)
	}
	return c, nil
}

func (f *fakeBackend) Send(_ context.Context, m wire.Message) (wire.Message, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	m.MessageID, m.SenderID, m.Timestamp = fmt.Sprintf("m%d", f.nextID), f.user, f.now
	f.sends = append(f.sends, m)
	return m, nil
}

func (f *fakeBackend) Attach(_ context.Context, id, path, text string) (wire.Message, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	m := wire.Message{ConversationID: id, MessageID: fmt.Sprintf("m%d", f.nextID), SenderID: f.user, Content: text, Timestamp: f.now,
		Attachment: "media/" + f.user + "/" + strings.Repeat("x", 16), AttachmentInfo: &wire.AttachmentInfo{Name: filepath.Base(path)}}
	f.sends = append(f.sends, m)
	return m, nil
}

// IndexForSearch takes n off searchBacklog.
func (f *fakeBackend) IndexForSearch(_ context.Context, n int) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.searchBacklog = max(f.searchBacklog-n, 0)
	return f.searchBacklog, nil
}

// Search finds messages of the fixture containing query (case ignored), in
// the cache's order: time, conversation, seq_no, newest first.
func (f *fakeBackend) Search(_ context.Context, query, conv string, after *wire.Message, limit int) ([]SearchHit, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var hits []SearchHit
	for id, ms := range f.msgs {
		if conv != "" && id != conv {
			continue
		}
		for _, m := range ms {
			text := m.Content // a membership line with user ids, as the cache indexes it
			if wire.IsMembershipKind(m.Kind) {
				text = m.MembershipLine(nil)
			}
			i := strings.Index(strings.ToLower(text), strings.ToLower(query))
			if m.Kind != "" && !wire.IsMembershipKind(m.Kind) || i < 0 {
				continue
			}
			hits = append(hits, SearchHit{Message: m,
				Snippet: text[:i] + SnippetStart + text[i:i+len(query)] + SnippetEnd + text[i+len(query):]})
		}
	}
	order := func(a, b wire.Message) int {
		return cmp.Or(b.Timestamp.Compare(a.Timestamp), cmp.Compare(b.ConversationID, a.ConversationID), cmp.Compare(b.SeqNo, a.SeqNo))
	}
	slices.SortFunc(hits, func(a, b SearchHit) int { return order(a.Message, b.Message) })
	if after != nil {
		i := slices.IndexFunc(hits, func(h SearchHit) bool { return order(*after, h.Message) < 0 })
		if i < 0 {
			i = len(hits)
		}
		hits = hits[i:]
	}
	return hits[:min(len(hits), limit)], len(hits) > limit, nil
}

func (f *fakeBackend) MediaURL(_ context.Context, mediaID string) (string, error) {
	return "http://files.test/" + mediaID, nil
}

func (f *fakeBackend) SaveMedia(_ context.Context, mediaID, name string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saved = append(f.saved, mediaID)
	return "/tmp/downloads/" + name, nil
}

func (f *fakeBackend) MarkRead(_ context.Context, id string, seq int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads[id] = max(f.reads[id], seq)
	for i := range f.inbox {
		if f.inbox[i].ConversationID == id {
			f.inbox[i].LastReadSeq = max(f.inbox[i].LastReadSeq, seq)
			f.inbox[i].Unread = max(f.inbox[i].LastSeq-f.inbox[i].LastReadSeq, 0)
		}
	}
	return nil
}

func (f *fakeBackend) CreateDirect(_ context.Context, peer string) (wire.Conversation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := wire.DirectConversationID(f.user, peer)
	c := wire.Conversation{ConversationID: id, Type: wire.Direct, CreatedAt: f.now,
		Participants: []wire.Participant{{UserID: f.user}, {UserID: peer}}}
	f.convs[id] = c
	return c, nil
}

func (f *fakeBackend) CreateGroup(_ context.Context, name string, members []string) (wire.Conversation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := "g:" + strings.ReplaceAll(name, " ", "-")
	c := wire.Conversation{ConversationID: id, Type: wire.Group, Name: name, CreatedAt: f.now,
		Participants: []wire.Participant{{UserID: f.user, Role: wire.RoleAdmin}}}
	for _, u := range members {
		c.Participants = append(c.Participants, wire.Participant{UserID: u, Role: wire.RoleMember})
	}
	f.convs[id] = c
	return c, nil
}

func (f *fakeBackend) AddMembers(_ context.Context, id string, members []string) (wire.Conversation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.convs[id]
	if !ok {
		return c, wire.Errorf(wire.CodeNotFound, "no conversation %s", id)
	}
	for _, u := range members {
		if u == "nobody" {
			return c, wire.Errorf(wire.CodeNotFound, "no user %s", u)
		}
		c.Participants = append(c.Participants, wire.Participant{UserID: u, Role: wire.RoleMember})
	}
	f.convs[id] = c
	return c, nil
}

func (f *fakeBackend) Channels(context.Context) ([]wire.ChannelInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []wire.ChannelInfo
	for _, c := range f.channels {
		_, joined := f.convs[c.ConversationID]
		out = append(out, wire.ChannelInfo{ConversationID: c.ConversationID, Name: c.Name, Topic: c.Topic, Joined: joined})
	}
	return out, nil
}

func (f *fakeBackend) JoinChannel(_ context.Context, id string) (wire.Conversation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.channels {
		if c.ConversationID == id {
			c.Participants = append(c.Participants, wire.Participant{UserID: f.user, Role: wire.RoleMember})
			f.convs[id] = c
			return c, nil
		}
	}
	return wire.Conversation{}, wire.Errorf(wire.CodeNotFound, "no channel %s", id)
}

func (f *fakeBackend) Leave(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.convs[id]; !ok {
		return wire.Errorf(wire.CodeNotFound, "not a member of %s", id)
	}
	delete(f.convs, id)
	f.left = append(f.left, id)
	// As the cache does on the user's own left event (localstore/left.go).
	f.inbox = slices.DeleteFunc(f.inbox, func(e wire.InboxEntry) bool { return e.ConversationID == id })
	return nil
}

func (f *fakeBackend) Events() <-chan client.Event { return f.events }

func (f *fakeBackend) Typing(conv string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.typing = append(f.typing, conv)
}

func (f *fakeBackend) Presence(_ context.Context, conv string) (wire.PresenceResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return wire.PresenceResponse{ConversationID: conv, Members: f.presence[conv]}, nil
}

func (f *fakeBackend) Muted(context.Context) (map[string]bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.muted), nil
}

func (f *fakeBackend) SetMuted(_ context.Context, conv string, muted bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.muted == nil {
		f.muted = map[string]bool{}
	}
	if muted {
		f.muted[conv] = true
	} else {
		delete(f.muted, conv)
	}
	return nil
}

func (f *fakeBackend) store() (*localstore.Store, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.kept, nil
}

func (f *fakeBackend) Drafts(ctx context.Context) (map[string]string, error) {
	s, err := f.store()
	if err != nil {
		return nil, err
	}
	return s.Drafts(ctx)
}

func (f *fakeBackend) InputHistory(ctx context.Context) (map[string][]string, error) {
	s, err := f.store()
	if err != nil {
		return nil, err
	}
	return s.InputHistory(ctx)
}

func (f *fakeBackend) SaveDrafts(ctx context.Context, drafts map[string]string) error {
	s, err := f.store()
	if err != nil {
		return err
	}
	return s.SetDrafts(ctx, drafts)
}

func (f *fakeBackend) AddInput(ctx context.Context, conv, text string) error {
	s, err := f.store()
	if err != nil {
		return err
	}
	return s.AddInput(ctx, conv, text)
}

func (f *fakeBackend) Profile(_ context.Context, id string) (wire.Profile, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.profileCalls = append(f.profileCalls, id)
	p, ok := f.profiles[id]
	if !ok {
		return wire.Profile{}, wire.Errorf(wire.CodeNotFound, "no user %q", id)
	}
	return p, nil
}

func (f *fakeBackend) RetryNow() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.retries++
}

// addMessages appends n messages to a conversation, alternating senders, one
// minute apart ending at last.
func (f *fakeBackend) addMessages(id string, senders []string, n int, last time.Time, text func(i int) string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	start := int64(len(f.msgs[id]))
	for i := range n {
		seq := start + int64(i) + 1
		f.msgs[id] = append(f.msgs[id], wire.Message{
			ConversationID: id, SeqNo: seq, MessageID: fmt.Sprintf("%s-%d", id, seq),
			SenderID: senders[i%len(senders)], Content: text(i),
			Timestamp: last.Add(-time.Duration(n-1-i) * time.Minute),
		})
	}
}

// fixtureNow is the fixed clock of every screen test: a Tuesday afternoon.
var fixtureNow = time.Date(2026, 3, 10, 15, 30, 0, 0, time.UTC)

// fixture is alice's account with three conversations.
func fixture() *fakeBackend {
	f := newFakeBackend("alice", fixtureNow)
	bob := wire.DirectConversationID("alice", "bob")
	carol := wire.DirectConversationID("alice", "carol")
	team := "g:team"
	f.convs[bob] = wire.Conversation{ConversationID: bob, Type: wire.Direct,
		Participants: []wire.Participant{{UserID: "alice", Role: wire.RoleMember}, {UserID: "bob", Role: wire.RoleMember}}}
	f.convs[carol] = wire.Conversation{ConversationID: carol, Type: wire.Direct,
		Participants: []wire.Participant{{UserID: "alice", Role: wire.RoleMember}, {UserID: "carol", Role: wire.RoleMember}}}
	f.convs[team] = wire.Conversation{ConversationID: team, Type: wire.Group, Name: "team",
		Participants: []wire.Participant{{UserID: "alice", Role: wire.RoleAdmin}, {UserID: "bob", Role: wire.RoleMember}, {UserID: "carol", Role: wire.RoleMember}}}

	yesterday := fixtureNow.Add(-24 * time.Hour)
	f.msgs[bob] = []wire.Message{
		{ConversationID: bob, SeqNo: 1, MessageID: "b1", SenderID: "bob", Content: "are you coming to the launch tomorrow?", Timestamp: yesterday.Add(-2 * time.Hour)},
		{ConversationID: bob, SeqNo: 2, MessageID: "b2", SenderID: "alice", Content: "yes, I'll bring the demo", Timestamp: yesterday.Add(-2*time.Hour + time.Minute)},
		{ConversationID: bob, SeqNo: 3, MessageID: "b3", SenderID: "bob", Content: "great. see you there", Timestamp: yesterday.Add(-2*time.Hour + 2*time.Minute)},
		{ConversationID: bob, SeqNo: 4, MessageID: "b4", SenderID: "alice", Content: "morning! the demo build is ready", Timestamp: fixtureNow.Add(-3 * time.Hour)},
		{ConversationID: bob, SeqNo: 5, MessageID: "b5", SenderID: "alice", Content: "it needs a second pair of eyes on the migration: the old clients still send the v1 frames, and the server has to answer them until everyone upgraded", Timestamp: fixtureNow.Add(-3*time.Hour + time.Minute)},
		{ConversationID: bob, SeqNo: 6, MessageID: "b6", SenderID: "bob", Content: "looking now\nfirst thing: the error codes", Timestamp: fixtureNow.Add(-20 * time.Minute)},
		{ConversationID: bob, SeqNo: 7, MessageID: "b7", SenderID: "bob", Content: "ping me when you are back", Timestamp: fixtureNow.Add(-5 * time.Minute)},
	}
	f.statuses[bob] = []wire.MemberStatus{
		{UserID: "alice", LastDeliveredSeq: 5, LastReadSeq: 5},
		{UserID: "bob", LastDeliveredSeq: 5, LastReadSeq: 4},
	}
	f.addMessages(team, []string{"carol", "bob", "alice"}, 3, fixtureNow.Add(-50*time.Minute), func(i int) string {
		return []string{"standup moved to 10:30", "ok", "works for me"}[i]
	})
	f.statuses[team] = []wire.MemberStatus{
		{UserID: "alice", LastDeliveredSeq: 3, LastReadSeq: 3},
		{UserID: "bob", LastDeliveredSeq: 3, LastReadSeq: 3},
		{UserID: "carol", LastDeliveredSeq: 3, LastReadSeq: 2},
	}
	f.addMessages(carol, []string{"carol"}, 1, fixtureNow.Add(-6*24*time.Hour), func(int) string { return "thanks for the review!" })

	f.inbox = []wire.InboxEntry{
		{ConversationID: carol, Type: wire.Direct, Peer: "carol", LastSeq: 1, LastMessageBody: "thanks for the review!", LastMessageSender: "carol", LastMessageAt: fixtureNow.Add(-6 * 24 * time.Hour), LastReadSeq: 1, LastDeliveredSeq: 1},
		{ConversationID: bob, Type: wire.Direct, Peer: "bob", LastSeq: 7, LastMessageBody: "ping me when you are back", LastMessageSender: "bob", LastMessageAt: fixtureNow.Add(-5 * time.Minute), LastReadSeq: 5, LastDeliveredSeq: 7, Unread: 2},
		{ConversationID: team, Type: wire.Group, Name: "team", LastSeq: 3, LastMessageBody: "works for me", LastMessageSender: "alice", LastMessageAt: fixtureNow.Add(-50 * time.Minute), LastReadSeq: 3, LastDeliveredSeq: 3},
	}
	return f
}

// harness drives the root model as Bubble Tea would: it runs the commands an
// Update returns and feeds their messages back. Commands that block (the event
// pump, timers) are given up on after a short wait; events are fed to Update
// directly instead of through the channel.
type harness struct {
	t  *testing.T
	be *fakeBackend
	m  tea.Model
	// before, when set, returns messages to deliver ahead of msg: how a test
	// makes an event overtake a command's answer, as it can in the real loop.
	before func(msg tea.Msg) []tea.Msg
}

const cmdWait = 80 * time.Millisecond

func newHarness(t *testing.T, be *fakeBackend, w, h int) *harness {
	t.Helper()
	return newHarnessWith(t, be, w, h, nil)
}

// newHarnessWith is newHarness with options changed by opt first.
func newHarnessWith(t *testing.T, be *fakeBackend, w, h int, opt func(*Options)) *harness {
	t.Helper()
	o := Options{Backend: be, Now: func() time.Time { return fixtureNow }, Location: time.UTC, Dark: true, PageSize: 50,
		OpenURL: func(string) error { return nil }} // never a real browser from a test
	if opt != nil {
		opt(&o)
	}
	m := New(o)
	// Timers are dropped here (runCmds): a report's answer lets the next go
	// at once, as before the rest (TestReadReportsRestBetween has it).
	m.c.readGap = 0
	hs := &harness{t: t, be: be, m: m}
	t.Cleanup(func() { close(be.events) })
	hs.run(m.Init())
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	return hs
}

// send delivers one message and everything it causes.
func (h *harness) send(msg tea.Msg) {
	h.t.Helper()
	h.feed([]tea.Msg{msg}, 0)
}

func (h *harness) feed(msgs []tea.Msg, depth int) {
	h.t.Helper()
	if depth > 20 {
		h.t.Fatalf("message loop deeper than 20 rounds: %v", msgs)
	}
	for _, msg := range msgs {
		if msg == nil {
			continue
		}
		if b, ok := msg.(tea.BatchMsg); ok {
			h.feed(runCmds(b), depth+1)
			continue
		}
		if reflect.TypeOf(msg).Name() == "sequenceMsg" {
			h.t.Fatalf("tea.Sequence is not supported by the harness")
		}
		if h.before != nil {
			if ahead := h.before(msg); len(ahead) > 0 {
				h.feed(ahead, depth+1)
			}
		}
		var cmd tea.Cmd
		h.m, cmd = h.m.Update(msg)
		h.feed(runCmds([]tea.Cmd{cmd}), depth+1)
	}
}

func (h *harness) run(cmd tea.Cmd) { h.feed(runCmds([]tea.Cmd{cmd}), 0) }

// waitsByDesign says whether a command waits by design — the event pump,
// timers, the cursor's blink — told apart by the name of the function its
// closure runs (inlined into its caller, a closure is named
// caller.waitEvent.func2, so the name is matched, not the code). The harness
// gives those cmdWait; every other command is waited for until it answers
// (up to slowCmd), so a page load on a loaded machine is not dropped as if
// it were a timer.
func waitsByDesign(c tea.Cmd) bool {
	name := runtime.FuncForPC(reflect.ValueOf(c).Pointer()).Name()
	for _, w := range []string{".waitEvent.func", ".Tick.func", ".Blink.func"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// slowCmd bounds the wait for a command that does not wait by design: one
// that takes longer is taken to block (a gate a test holds) and dropped.
const slowCmd = 5 * time.Second

// runCmds runs commands in parallel and returns, in command order, the
// messages of those that answered: within cmdWait for the ones that wait by
// design, within slowCmd for the rest.
func runCmds(cmds []tea.Cmd) []tea.Msg {
	out := make([]chan tea.Msg, len(cmds))
	for i, c := range cmds {
		out[i] = make(chan tea.Msg, 1)
		if c == nil {
			out[i] <- nil
			continue
		}
		go func() { out[i] <- c() }()
	}
	timer := time.NewTimer(cmdWait)
	defer timer.Stop()
	expired := false
	slow := time.NewTimer(slowCmd)
	defer slow.Stop()
	slowExpired := false
	msgs := make([]tea.Msg, 0, len(cmds))
	for i, ch := range out {
		if c := cmds[i]; c != nil && !waitsByDesign(c) && !slowExpired {
			select {
			case m := <-ch:
				msgs = append(msgs, m)
			case <-slow.C:
				slowExpired = true
			}
			continue
		}
		if !expired {
			select {
			case m := <-ch:
				msgs = append(msgs, m)
				continue
			case <-timer.C:
				expired = true
			}
		}
		// Past the wait, take only what is ready: the rest blocks (the event
		// pump, timers).
		select {
		case m := <-ch:
			msgs = append(msgs, m)
		default:
		}
	}
	return msgs
}

func (h *harness) key(keys ...string) {
	h.t.Helper()
	for _, k := range keys {
		h.send(keyMsg(k))
	}
}

// typeAhead delivers keys as Bubble Tea does when they were typed faster than
// the screen answers (or several came in one read): every key's Update runs
// before the commands of the keys before it, whose messages queue behind them.
func (h *harness) typeAhead(keys ...string) {
	h.t.Helper()
	var cmds []tea.Cmd
	for _, k := range keys {
		var cmd tea.Cmd
		h.m, cmd = h.m.Update(keyMsg(k))
		cmds = append(cmds, cmd)
	}
	h.feed(runCmds(cmds), 1)
}

func (h *harness) typeText(s string) {
	h.t.Helper()
	for _, r := range s {
		h.send(keyMsg(string(r)))
	}
}

// keyMsg builds the key press that String() reports as k.
func keyMsg(k string) tea.KeyPressMsg {
	special := map[string]rune{
		"enter": tea.KeyEnter, "esc": tea.KeyEscape, "tab": tea.KeyTab, "up": tea.KeyUp, "down": tea.KeyDown,
		"left": tea.KeyLeft, "right": tea.KeyRight, "pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown,
		"home": tea.KeyHome, "end": tea.KeyEnd, "backspace": tea.KeyBackspace, "space": tea.KeySpace, "f1": tea.KeyF1,
	}
	var mod tea.KeyMod
	base := k
	for {
		switch {
		case strings.HasPrefix(base, "ctrl+") && len(base) > 5:
			mod |= tea.ModCtrl
			base = base[5:]
			continue
		case strings.HasPrefix(base, "alt+") && len(base) > 4:
			mod |= tea.ModAlt
			base = base[4:]
			continue
		case strings.HasPrefix(base, "shift+") && len(base) > 6:
			mod |= tea.ModShift
			base = base[6:]
			continue
		}
		break
	}
	if r, ok := special[base]; ok {
		return tea.KeyPressMsg{Code: r, Mod: mod}
	}
	r := []rune(base)[0]
	if mod == 0 {
		if r >= 'A' && r <= 'Z' {
			return tea.KeyPressMsg{Code: r + 32, ShiftedCode: r, Mod: tea.ModShift, Text: base}
		}
		return tea.KeyPressMsg{Code: r, Text: base}
	}
	return tea.KeyPressMsg{Code: r, Mod: mod}
}

// screen is the plain text on screen, colour stripped.
func (h *harness) screen() string {
	return ansi.Strip(h.m.View().Content)
}

func (h *harness) root() Model { return h.m.(Model) }

func (h *harness) wantScreen(sub string) {
	h.t.Helper()
	if s := h.screen(); !strings.Contains(s, sub) {
		h.t.Fatalf("screen lacks %q:\n%s", sub, s)
	}
}
