package localstore

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/chatterm/chat/wire"
)

// Pages of a search, put together, are every hit once and in order, in one
// conversation and across all of them, whatever order the messages reached
// the cache in (pages of history arrive newest first).
func TestSearchPagesAreCompleteAndInOrder(t *testing.T) {
	s := MustOpen(t)
	const grp = "g:ops"
	var want []int64 // the direct chat's hits, newest first
	var all []SearchCursor
	var ms []wire.Message
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for seq := int64(500); seq >= 1; seq-- {
		text := "nothing here"
		if seq%3 != 0 {
			text = fmt.Sprintf("alpha number %d", seq)
		}
		m := msg(dm, seq, "bob", text)
		m.Timestamp = base.Add(time.Duration(seq) * time.Second)
		g := msg(grp, seq, "carol", "alpha in the group")
		g.Timestamp = m.Timestamp // same instant: the order must still be total
		ms = append(ms, m, g)
	}
	for seq := int64(500); seq >= 1; seq-- {
		// At one instant the conversation ids order the hits: "g:" after "dm:".
		all = append(all, SearchCursor{ConversationID: grp, SeqNo: seq})
		if seq%3 != 0 {
			want = append(want, seq)
			all = append(all, SearchCursor{ConversationID: dm, SeqNo: seq})
		}
	}
	for page := range slices.Chunk(ms, 100) {
		if _, err := s.PutMessages(ctx, page...); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("OneConversation", func(t *testing.T) {
		var got []int64
		var before SearchCursor
		for pages := 0; ; pages++ {
			if pages > len(want) {
				t.Fatal("paging does not end")
			}
			hits, next, err := s.SearchPage(ctx, SearchQuery{Words: "alpha", ConversationID: dm, Before: before, Limit: 7})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				if h.Message.ConversationID != dm {
					t.Fatalf("a hit from %s in a search of %s", h.Message.ConversationID, dm)
				}
			}
			got = append(got, hitSeqs(hits)...)
			if next.IsZero() {
				break
			}
			// The cursor as the command line prints and reads it back.
			if before, err = ParseSearchCursor(next.String()); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("pages put together: %d hits %v…, want %d %v…", len(got), got[:min(10, len(got))], len(want), want[:10])
		}
	})

	t.Run("AllConversations", func(t *testing.T) {
		var got []SearchCursor
		var before SearchCursor
		for pages := 0; ; pages++ {
			if pages > len(all) {
				t.Fatal("paging does not end")
			}
			hits, next, err := s.SearchPage(ctx, SearchQuery{Words: "alpha", Before: before, Limit: 9})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				got = append(got, SearchCursor{ConversationID: h.Message.ConversationID, SeqNo: h.Message.SeqNo})
			}
			if next.IsZero() {
				break
			}
			if before, err = ParseSearchCursor(next.String()); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(got, all) {
			t.Fatalf("pages put together: %d hits, want %d; first %v, want %v", len(got), len(all), got[:min(6, len(got))], all[:6])
		}
	})

	t.Run("ErrCursorFromOneConversation", func(t *testing.T) {
		_, _, err := s.SearchPage(ctx, SearchQuery{Words: "alpha", Before: SearchCursor{SeqNo: 5}})
		if wire.ErrorCode(err) != wire.CodeInvalid {
			t.Fatalf("a conversation's cursor for a search of all: %v", err)
		}
	})
}

// A conversation with nothing searchable, and a seq_no past what the
// index's key holds, find nothing and break nothing.
func TestSearchConversationEdges(t *testing.T) {
	s := MustOpen(t)
	if _, err := s.PutMessages(ctx, msg(dm, 1, "bob", "alpha"), msg(dm, 1<<32, "bob", "alpha beyond"), msg("g:x", 1, "carol", "beta")); err != nil {
		t.Fatal(err)
	}
	hits, err := s.Search(ctx, "alpha", dm, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := hitSeqs(hits); !slices.Equal(got, []int64{1}) {
		t.Fatalf("alpha in %s: %v, want [1] (seq 2^32 is not searchable)", dm, got)
	}
	if hits, err := s.Search(ctx, "alpha", "g:none", 10); err != nil || len(hits) != 0 {
		t.Fatalf("a conversation never cached: %v, %v", hits, err)
	}
	if hits, err := s.Search(ctx, "alpha", "g:x", 10); err != nil || len(hits) != 0 {
		t.Fatalf("alpha in g:x: %v, %v", hitSeqs(hits), err)
	}
}

func TestParseSearchCursor(t *testing.T) {
	for _, bad := range []string{"", "0", "-3", "x", "1.2", "1.x.dm:a:b", "1.2.not a conversation"} {
		if _, err := ParseSearchCursor(bad); wire.ErrorCode(err) != wire.CodeInvalid {
			t.Errorf("ParseSearchCursor(%q) = %v, want an invalid error", bad, err)
		}
	}
	c := SearchCursor{Timestamp: time.Unix(0, 1772366400123456789).UTC(), ConversationID: "dm:a:b", SeqNo: 42}
	if got, err := ParseSearchCursor(c.String()); err != nil || got != c {
		t.Fatalf("round trip of %v: %v, %v", c, got, err)
	}
}

// A cache indexed before migration 0010 (docids in arrival order) is
// indexed again under the new keys, and a search of one conversation finds
// every message it found before, and only those.
func TestSearchAfterMigrationTo10(t *testing.T) {
	path, raw := oldCache(t, 9)
	for seq := 3; seq >= 1; seq-- { // newest first, as pages arrive
		for _, conv := range []string{dm, "g:ops"} {
			if _, err := raw.Exec(`INSERT INTO messages (conversation_id, seq_no, message_id, sender_id, content, timestamp)
				VALUES (?, ?, ?, 'bob', ?, ?)`, conv, seq, fmt.Sprint(conv, seq), fmt.Sprint("alpha ", seq), seq); err != nil {
				t.Fatal(err)
			}
		}
	}
	s := openOldCache(t, path, raw)
	hits, err := s.Search(ctx, "alpha", dm, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := hitSeqs(hits); !slices.Equal(got, []int64{3, 2, 1}) {
		t.Fatalf("alpha in %s after the migration: %v, want [3 2 1]", dm, got)
	}
	for _, h := range hits {
		if h.Message.ConversationID != dm {
			t.Fatalf("a hit from %s", h.Message.ConversationID)
		}
	}
}
