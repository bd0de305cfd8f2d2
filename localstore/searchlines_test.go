package localstore

import (
	"slices"
	"strings"
	"testing"

	"github.com/chatterm/chat/wire"
)

// membershipEvents is one event of every membership kind in conversation
// conv, seq_no 2 to 10 (1 is left for a message).
func membershipEvents(conv string) []wire.Message {
	ev := func(seq int64, kind string, members []string, content string) wire.Message {
		m := msg(conv, seq, "alice", content)
		m.Kind, m.Members = kind, members
		return m
	}
	return []wire.Message{
		ev(2, wire.KindAdded, []string{"carol", "dave"}, ""),
		ev(3, wire.KindRemoved, []string{"erin"}, ""),
		ev(4, wire.KindLeft, nil, ""),
		ev(5, wire.KindJoined, nil, ""),
		ev(6, wire.KindRenamed, nil, "Night Shift"),
		ev(7, wire.KindTopic, nil, "release train"),
		ev(8, wire.KindTopic, nil, ""),
		ev(9, wire.KindAdminGranted, []string{"frank"}, ""),
		ev(10, wire.KindAdminRevoked, []string{"gina"}, ""),
	}
}

// Every membership line is found by the words the conversation shows it
// with (ids for users), in one conversation and across all of them, with
// the line as its snippet; other events stay out of the index.
func TestSearchFindsMembershipLines(t *testing.T) {
	s := MustOpen(t)
	const grp = "g:crew"
	evs := membershipEvents(grp)
	if _, err := s.PutMessages(ctx, append([]wire.Message{msg(grp, 1, "bob", "hello crew")}, evs...)...); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutMessages(ctx, ev(2, "bob", wire.KindReaction, 1, "added")); err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		line := e.MembershipLine(nil)
		for _, conv := range []string{grp, ""} {
			hits, err := s.Search(ctx, line, conv, 10)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(hitSeqs(hits), e.SeqNo) {
				t.Fatalf("%s (%q) in %q: found %v, want seq %d among them", e.Kind, line, conv, hitSeqs(hits), e.SeqNo)
			}
			for _, h := range hits {
				if h.Message.SeqNo == e.SeqNo && strings.NewReplacer(SnippetStart, "", SnippetEnd, "").Replace(h.Snippet) != line {
					t.Fatalf("%s: snippet %q, want the line %q", e.Kind, h.Snippet, line)
				}
			}
		}
	}
	if got := hitSeqs(mustSearch(t, s, "carol added dave", grp)); !slices.Equal(got, []int64{2}) {
		t.Fatalf("carol added dave: %v, want [2]", got)
	}
	if got := hitSeqs(mustSearch(t, s, "night", "")); !slices.Equal(got, []int64{6}) {
		t.Fatalf("the new name: %v, want [6]", got)
	}
	if got := hitSeqs(mustSearch(t, s, "added", dm)); len(got) != 0 {
		t.Fatalf("a reaction found as %v", got)
	}
}

func mustSearch(t *testing.T, s *Store, q, conv string) []SearchHit {
	t.Helper()
	hits, err := s.Search(ctx, q, conv, 10)
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

// A cache made before migration 0012 had its membership events out of the
// index; the migration queues them, and the next search finds them.
func TestSearchMembershipAfterMigrationTo12(t *testing.T) {
	path, raw := oldCache(t, 11)
	const grp = "g:crew"
	insertOld(t, raw, append([]wire.Message{msg(grp, 1, "bob", "hello crew")}, membershipEvents(grp)...)...)
	s := openOldCache(t, path, raw)
	for _, c := range []struct {
		query string
		want  []int64
	}{
		{"carol added dave", []int64{2}},
		{"alice renamed night shift", []int64{6}},
		{"admin", []int64{10, 9}},
		{"hello", []int64{1}},
	} {
		if got := hitSeqs(mustSearch(t, s, c.query, grp)); !slices.Equal(got, c.want) {
			t.Errorf("%q after the migration: %v, want %v", c.query, got, c.want)
		}
	}
	var queued int
	if err := s.db.QueryRow(`SELECT count(*) FROM message_search`).Scan(&queued); err != nil || queued != 10 {
		t.Fatalf("the index holds %d rows (%v), want the message and 9 lines", queued, err)
	}
}

// A membership line dropped from the cache before it was indexed leaves
// its queue too (chat tail's cache trims what it printed, and never
// searches): nothing is indexed for it, and the rest still is.
func TestTrimmedLinesLeaveTheQueue(t *testing.T) {
	s := MustOpen(t)
	const grp = "g:crew"
	if _, err := s.PutMessages(ctx, append([]wire.Message{msg(grp, 1, "bob", "hello crew")}, membershipEvents(grp)...)...); err != nil {
		t.Fatal(err)
	}
	if _, err := s.TrimMessages(ctx, grp, 6); err != nil {
		t.Fatal(err)
	}
	var queued int
	if err := s.db.QueryRow(`SELECT count(*) FROM search_line_queue`).Scan(&queued); err != nil || queued != 5 {
		t.Fatalf("%d lines queued after the trim (%v), want the 5 from seq_no 6", queued, err)
	}
	if got := hitSeqs(mustSearch(t, s, "carol added dave", grp)); len(got) != 0 {
		t.Fatalf("a trimmed line found: %v", got)
	}
	if got := hitSeqs(mustSearch(t, s, "admin", grp)); !slices.Equal(got, []int64{10, 9}) {
		t.Fatalf("admin: %v, want [10 9]", got)
	}
}
