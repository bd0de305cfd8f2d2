package tui

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// namedFixture is the fixture with display names: bob is "Bob Dylan", carol
// has none, and mallory, in the team, calls herself "Bоb Dylan" (a Cyrillic
// о).
func namedFixture() *fakeBackend {
	be := fixture()
	be.profiles = map[string]wire.Profile{
		"alice":   {UserID: "alice", DisplayName: "Alice Liddell"},
		"bob":     {UserID: "bob", DisplayName: "Bob Dylan"},
		"carol":   {UserID: "carol", DisplayName: "carol"},
		"mallory": {UserID: "mallory", DisplayName: "Bоb Dylan"},
	}
	return be
}

// People appear by their display names in the inbox rows, the chat header,
// the senders, the typing line, notifications and the members list (with
// ids there), each asked of the server once.
func TestDisplayNamesWherePeopleAreShown(t *testing.T) {
	be := namedFixture()
	h := newHarnessWith(t, be, 120, 30, func(o *Options) { o.Notify = NotifyOSC9 })
	var raw []string
	h.before = func(msg tea.Msg) []tea.Msg {
		if r, ok := msg.(tea.RawMsg); ok {
			raw = append(raw, r.Msg.(string))
		}
		return nil
	}
	h.wantScreen("Bob Dylan") // bob's row
	if s := h.screen(); strings.Contains(s, "Bob Dylan (bob)") {
		t.Errorf("bob's name is like no one else's known yet, but shows his id:\n%s", s)
	}
	h.send(client.MessageEvent{Message: wire.Message{ConversationID: wire.DirectConversationID("alice", "carol"), SeqNo: 2,
		MessageID: "c2", SenderID: "carol", Content: "ping", Timestamp: fixtureNow}})
	if len(raw) != 1 || !strings.HasPrefix(raw[0], "\x1b]9;carol: ping") {
		t.Errorf("notification %q, want carol by her id (her name is her id)", raw)
	}

	openChat(h, bobConv)
	s := h.screen()
	if !strings.Contains(strings.Split(s, "\n")[0], "│  Bob Dylan  direct") {
		t.Errorf("chat header: %q", strings.Split(s, "\n")[0])
	}
	if !regexp.MustCompile(`Bob Dylan +are you coming`).MatchString(s) { // padded to the column's width
		t.Errorf("bob's messages are not by his name:\n%s", s)
	}
	h.send(client.TypingEvent{ConversationID: bobConv, UserID: "bob", At: fixtureNow})
	h.wantScreen("Bob Dylan is typing…")
	h.key("esc", "r") // reply to the newest, bob's
	h.wantScreen("replying to Bob Dylan: ping me")

	calls := slices.Clone(be.profileCalls)
	slices.Sort(calls)
	if c := slices.Compact(slices.Clone(calls)); len(c) != len(calls) {
		t.Errorf("profiles asked more than once: %q", be.profileCalls)
	}
}

// A name that reads like another's shows the ids beside both; a live
// profile change redraws the chat under the new name.
func TestConfusableNamesShowTheirIdsAndChangesAreLive(t *testing.T) {
	be := namedFixture()
	team := "g:team"
	c := be.convs[team]
	c.Participants = append(c.Participants, wire.Participant{UserID: "mallory", Role: wire.RoleMember})
	be.convs[team] = c
	h := newHarness(t, be, 120, 30)
	openChat(h, bobConv)
	h.wantScreen("Bob Dylan")
	openChat(h, team) // mallory is a member
	h.key("esc", "m")
	s := h.screen()
	for _, want := range []string{"Bоb Dylan (mallory)", "Bob Dylan (bob)"} {
		if !strings.Contains(s, want) {
			t.Errorf("members list lacks %q:\n%s", want, s)
		}
	}
	h.key("esc", "esc")
	h.wantScreen("Bob Dylan (bob)") // his inbox row, now that a look-alike is known

	h.send(client.ProfileEvent{Profile: wire.Profile{UserID: "mallory", DisplayName: "Mallory"}})
	h.send(client.ProfileEvent{Profile: wire.Profile{UserID: "carol", DisplayName: "Carol Danvers"}})
	if s := h.screen(); strings.Contains(s, "Bob Dylan (bob)") || !strings.Contains(s, "Carol Danvers") {
		t.Errorf("after the changes, bob alone has his name and carol has hers:\n%s", s)
	}
	openChat(h, team) // its lines drawn under the names as they are now
	h.wantScreen("Carol Danvers")
}

// openChat opens a conversation as the inbox lists it.
func openChat(h *harness, conv string) {
	h.t.Helper()
	for _, e := range h.root().inbox.entries {
		if e.ConversationID == conv {
			h.send(openConversationMsg{entry: e})
			return
		}
	}
	h.t.Fatalf("%s is not in the inbox", conv)
}

// A profile frame sent while the client was reconnecting is lost: the
// reconnect asks the known names again, and a name changed meanwhile shows.
// The first connect asks nothing more.
func TestNamesAskedAgainOnReconnect(t *testing.T) {
	be := namedFixture()
	h := newHarness(t, be, 120, 30)
	openChat(h, bobConv)
	h.wantScreen("Bob Dylan")
	h.send(client.StateEvent{State: client.State{Status: client.Connected}})
	be.mu.Lock()
	calls := len(be.profileCalls)
	be.mu.Unlock()
	h.send(client.StateEvent{State: client.State{Status: client.Connected}})
	be.mu.Lock()
	if len(be.profileCalls) != calls {
		t.Fatalf("connected twice in a row asked %v again", be.profileCalls[calls:])
	}
	be.profiles["bob"] = wire.Profile{UserID: "bob", DisplayName: "Robert Zimmerman"} // its frame was missed
	be.mu.Unlock()
	h.send(client.StateEvent{State: client.State{Status: client.Reconnecting}})
	h.send(client.StateEvent{State: client.State{Status: client.Connected}})
	h.wantScreen("Robert Zimmerman")
	be.mu.Lock()
	defer be.mu.Unlock()
	if !slices.Contains(be.profileCalls[calls:], "bob") {
		t.Fatalf("the reconnect asked %v, not bob", be.profileCalls[calls:])
	}
}
