package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/chatterm/chat/internal/searchwords"
	"github.com/chatterm/chat/wire"
)

// A membership line found by search reads as the chat shows it, with names,
// not the user ids the cache indexes it by; the name whose id matched is
// marked.
func TestSearchShowsMembershipLinesWithNames(t *testing.T) {
	be := namedFixture()
	be.profiles["dave"] = wire.Profile{UserID: "dave", DisplayName: "Dave Grohl"}
	team := "g:team"
	be.msgs[team] = append(be.msgs[team],
		wire.Message{ConversationID: team, SeqNo: 4, MessageID: "e4", SenderID: "bob", Kind: wire.KindRemoved,
			Members: []string{"dave"}, Timestamp: fixtureNow.Add(-40 * time.Minute)},
		wire.Message{ConversationID: team, SeqNo: 5, MessageID: "e5", SenderID: "alice", Kind: wire.KindAdded,
			Members: []string{"bob", "dave"}, Timestamp: fixtureNow.Add(-30 * time.Minute)})
	h := newHarness(t, be, 100, 30)
	h.key("/")
	h.typeText("dave")
	h.wantScreen("you added Bob Dylan and Dave Grohl")
	h.wantScreen("Bob Dylan removed Dave Grohl")
	if s := h.screen(); strings.Contains(s, "removed dave") || strings.Contains(s, "added bob") {
		t.Fatalf("a membership hit shows user ids:\n%s", s)
	}
	hits := h.root().search.hits
	if len(hits) != 2 {
		t.Fatalf("%d hits, want the two lines", len(hits))
	}
	if got, want := h.root().search.hitText(hits[0]), "you added Bob Dylan and "+SnippetStart+"Dave Grohl"+SnippetEnd; got != want {
		t.Fatalf("the newest hit's text %q, want %q", got, want)
	}
}

func TestMarkMatches(t *testing.T) {
	for _, c := range []struct{ text, query, want string }{
		{"you renamed the group to Night Shift", "night", "you renamed the group to [Night] Shift"},
		{"[Carol Dylan] added carolyn", "carol", "[Carol Dylan] added [carolyn]"},
		{"Café set the topic", "cafe topic", "[Café] set the [topic]"},
		{"nothing here", "x", "nothing here"},
	} {
		in := strings.NewReplacer("[", SnippetStart, "]", SnippetEnd).Replace(c.text)
		got := strings.NewReplacer(SnippetStart, "[", SnippetEnd, "]").Replace(markMatches(in, searchwords.Terms(c.query)))
		if got != c.want {
			t.Errorf("markMatches(%q, %q) = %q, want %q", c.text, c.query, got, c.want)
		}
	}
}
