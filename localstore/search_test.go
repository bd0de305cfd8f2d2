package localstore

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chatterm/chat/internal/searchwords"
	"github.com/chatterm/chat/wire"
)

func hitSeqs(hs []SearchHit) []int64 {
	var out []int64
	for _, h := range hs {
		out = append(out, h.Message.SeqNo)
	}
	return out
}

// Search finds every word as a word or its start, case and accents ignored,
// newest first; edits and deletes change what it finds; events are not
// found; a conversation narrows it.
func TestSearch(t *testing.T) {
	s := MustOpen(t)
	const grp = "g:ops"
	if _, err := s.PutMessages(ctx,
		msg(dm, 1, "bob", "The deployment FAILED on node 3"),
		msg(dm, 2, "me", "retrying the deploy now"),
		msg(dm, 3, "bob", "Café au lait?"),
		msg(grp, 1, "carol", "deploy failed again, rolling back"),
		ev(4, "bob", wire.KindReaction, 1, "deploy"), // an event: never a hit
	); err != nil {
		t.Fatal(err)
	}
	search := func(q, conv string) []int64 {
		t.Helper()
		hs, err := s.Search(ctx, q, conv, 10)
		if err != nil {
			t.Fatal(err)
		}
		return hitSeqs(hs)
	}
	if got := search("deploy fail", ""); !equal(got, []int64{1, 1}) {
		t.Fatalf("deploy fail: %v", got)
	}
	if got := search("deploy", dm); !equal(got, []int64{2, 1}) {
		t.Fatalf("deploy in the direct chat, newest first: %v", got)
	}
	if got := search("cafe", ""); !equal(got, []int64{3}) {
		t.Fatalf("cafe (accents ignored): %v", got)
	}
	hs, _ := s.Search(ctx, "failed", dm, 10)
	if len(hs) != 1 || hs[0].Snippet != "The deployment "+SnippetStart+"FAILED"+SnippetEnd+" on node 3" {
		t.Fatalf("snippet: %+v", hs)
	}
	// An edit changes what is found; a delete leaves nothing.
	if _, err := s.PutMessages(ctx, ev(5, "bob", wire.KindEdit, 1, "all green on node 3"), ev(6, "me", wire.KindDelete, 2, "")); err != nil {
		t.Fatal(err)
	}
	if got := search("deploy", dm); len(got) != 0 {
		t.Fatalf("after an edit and a delete, deploy still finds %v", got)
	}
	if got := search("green", dm); !equal(got, []int64{1}) {
		t.Fatalf("the edited text is not found: %v", got)
	}
	// Punctuation and FTS syntax in the query are just separators.
	if got := search(`"green" (node* -`, dm); !equal(got, []int64{1}) {
		t.Fatalf("a query with FTS syntax: %v", got)
	}
	if _, err := s.Search(ctx, " ?! ", "", 10); wire.ErrorCode(err) != wire.CodeInvalid {
		t.Fatalf("a query with no word: %v", err)
	}
}

// The full-text index drives a search, with or without a conversation: a
// plan that walks the conversation's rows and asks the index about each one
// took a minute on a conversation of 50,000 messages.
func TestSearchPlanDrivenByTheIndex(t *testing.T) {
	s := MustOpen(t)
	var ms []wire.Message
	for i := range 200 {
		ms = append(ms, msg(dm, int64(i+1), "bob", "seed text"))
	}
	if _, err := s.PutMessages(ctx, ms...); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, "ANALYZE"); err != nil { // statistics that tempt the planner to the conversation index
		t.Fatal(err)
	}
	for _, conv := range []string{dm, ""} {
		q, args, err := s.searchQuery(ctx, `"seed*"`, SearchQuery{ConversationID: conv, Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		plan := queryPlanSteps(t, s, q, args...)
		t.Logf("conversation %q:\n%s", conv, strings.Join(plan, "\n"))
		var first string
		for _, d := range plan {
			if strings.HasPrefix(d, "SCAN ") || strings.HasPrefix(d, "SEARCH ") {
				first = d
				break
			}
		}
		if !strings.HasPrefix(first, "SCAN message_search VIRTUAL TABLE") {
			t.Errorf("conversation %q: the plan does not start from the full-text index:\n%s", conv, strings.Join(plan, "\n"))
		}
		if conv != "" {
			// FTS4's plan number carries FTS3_HAVE_DOCID_GE (0x20000) and
			// FTS3_HAVE_DOCID_LE (0x40000) when the docid range reaches the
			// index, and ":DESC" when it hands the hits newest first, so
			// that LIMIT stops it after the page.
			var idx int
			var order string
			if _, err := fmt.Sscanf(strings.TrimPrefix(first, "SCAN message_search VIRTUAL TABLE INDEX "), "%d:%s", &idx, &order); err != nil ||
				idx&0x60000 != 0x60000 || order != "DESC" {
				t.Errorf("conversation %q: the index is not read as a docid range newest first (%s)", conv, first)
			}
		}
		for _, d := range plan {
			if strings.Contains(d, " s ") && !strings.Contains(d, "INTEGER PRIMARY KEY") {
				t.Errorf("conversation %q: search_convs read other than by its number (%s):\n%s", conv, d, strings.Join(plan, "\n"))
			}
		}
	}
}

func TestSnippet(t *testing.T) {
	for _, c := range []struct{ text, query, want string }{
		{"The deployment FAILED on node 3", "fail", "The deployment [FAILED] on node 3"},
		{"Café au lait?", "cafe", "[Café] au lait?"},
		{"one two three four five six seven eight nine ten eleven twelve thirteen fourteen deploy fifteen", "deploy",
			"…four five six seven eight nine ten eleven twelve thirteen fourteen [deploy]…"},
		{"deploy one two three four five six seven eight nine ten eleven twelve thirteen", "deploy",
			"[deploy] one two three four five six seven eight nine ten eleven…"},
		{"", "x", ""},
	} {
		terms := searchwords.Terms(c.query)
		got := strings.NewReplacer(SnippetStart, "[", SnippetEnd, "]").Replace(snippet(c.text, terms))
		if got != c.want {
			t.Errorf("snippet(%q, %q) = %q, want %q", c.text, c.query, got, c.want)
		}
	}
}

// IndexQueued indexes a backlog a step at a time, counting what is left.
func TestIndexQueuedInSteps(t *testing.T) {
	s := MustOpen(t)
	var ms []wire.Message
	for i := range 250 {
		ms = append(ms, msg(dm, int64(i+1), "bob", fmt.Sprintf("step %d", i+1)))
	}
	if _, err := s.PutMessages(ctx, ms...); err != nil {
		t.Fatal(err)
	}
	for _, want := range []int{150, 50, 0} {
		left, err := s.IndexQueued(ctx, 100)
		if err != nil || left != want {
			t.Fatalf("IndexQueued = %d, %v; want %d left", left, err, want)
		}
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM message_search WHERE message_search MATCH 'step'`).Scan(&n); err != nil || n != 250 {
		t.Fatalf("indexed %d, %v; want 250", n, err)
	}
}
