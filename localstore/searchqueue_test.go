package localstore

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chatterm/chat/wire"
)

// No trigger queues each stored message for search: the commit that stores
// them queues them all at once (searchqueue.go, migration 0013).
func TestNoTriggerQueuesEachStoredMessage(t *testing.T) {
	s := MustOpen(t)
	rows, err := s.db.Query(`SELECT name FROM sqlite_master
		WHERE type = 'trigger' AND tbl_name = 'messages' AND sql LIKE '%AFTER INSERT ON messages%'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		t.Errorf("trigger %s runs for every message stored", name)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

func countRows(t *testing.T, s *Store, table string) int {
	t.Helper()
	var n int
	if err := s.db.QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// wantFound fails unless a search for q in conv finds exactly seqs (newest
// first).
func wantFound(t *testing.T, s *Store, q, conv string, seqs ...int64) {
	t.Helper()
	hits, err := s.Search(ctx, q, conv, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if got := hitSeqs(hits); !slices.Equal(got, seqs) {
		t.Fatalf("search %q in %q: %v, want %v", q, conv, got, seqs)
	}
}

// A receive commit queues each searchable message it stores once, and
// nothing else: not an event, not a message stored without text, not a
// message it already held; a membership line waits in the lines' queue.
func TestReceiveCommitQueuesItsMessagesOnce(t *testing.T) {
	s := MustOpen(t)
	const grp = "g:crew"
	var commit []wire.Message
	var want []int64
	for seq := int64(1); seq <= 300; seq++ {
		commit = append(commit, msg(dm, seq, "bob", fmt.Sprint("burst word", seq)))
		want = append(want, 301-seq)
	}
	gone := msg(dm, 301, "bob", "")
	gone.Deleted = true
	commit = append(commit, gone, ev(302, "bob", wire.KindReaction, 1, "👍"))
	commit = append(commit, msg(grp, 1, "carol", "burst in the group"))
	commit = append(commit, membershipEvents(grp)...)
	if _, err := s.PutMessages(ctx, commit...); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, s, "search_queue"); n != 301 {
		t.Fatalf("%d messages queued for search, want the 300 of the direct chat and 1 of the group", n)
	}
	if n := countRows(t, s, "search_line_queue"); n != 9 {
		t.Fatalf("%d membership lines queued, want 9", n)
	}
	// Delivered again, with two new ones: only those are queued.
	again := append(commit[290:300:300], msg(dm, 303, "bob", "burst late"), msg(dm, 304, "bob", "burst later"))
	if _, err := s.PutMessages(ctx, again...); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, s, "search_queue"); n != 303 {
		t.Fatalf("%d messages queued after a redelivery, want 303", n)
	}
	wantFound(t, s, "burst", dm, append([]int64{304, 303}, want...)...)
	wantFound(t, s, "burst", grp, 1)
	wantFound(t, s, "carol added dave", grp, 2)
	// Once indexed, a redelivery queues nothing, and nothing is found twice.
	if _, err := s.PutMessages(ctx, again...); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, s, "search_queue"); n != 0 {
		t.Fatalf("a redelivery of indexed messages queued %d", n)
	}
	wantFound(t, s, "later", dm, 304)
	wantFound(t, s, "word300", dm, 300)
}

// Every path that stores, changes or removes cached messages keeps search
// right: what is stored is found, an edit by its new text and not its old,
// what is deleted, trimmed or rolled back is not.
func TestSearchFollowsEveryPathThatStores(t *testing.T) {
	t.Run("HistoryPageBelowTheLive", func(t *testing.T) {
		s := MustOpen(t)
		if _, err := s.PutMessages(ctx, msg(dm, 51, "bob", "live kiwi")); err != nil {
			t.Fatal(err)
		}
		wantFound(t, s, "kiwi", dm, 51)
		var page []wire.Message
		for seq := int64(50); seq >= 1; seq-- {
			page = append(page, msg(dm, seq, "bob", fmt.Sprint("page kiwi ", seq)))
		}
		if _, err := s.PutMessages(ctx, page...); err != nil {
			t.Fatal(err)
		}
		hits, err := s.Search(ctx, "kiwi", dm, 100)
		if err != nil || len(hits) != 51 {
			t.Fatalf("kiwi after a page of history: %d hits (%v), want 51", len(hits), err)
		}
	})
	t.Run("Sent", func(t *testing.T) {
		s := MustOpen(t)
		if _, err := s.Enqueue(ctx, dm, "mine-1", "my own mango"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CompleteSends(ctx, wire.SendResponse{MessageID: "mine-1", ConversationID: dm, SeqNo: 7, Timestamp: t0}); err != nil {
			t.Fatal(err)
		}
		wantFound(t, s, "mango", dm, 7)
	})
	for _, indexedFirst := range []bool{false, true} {
		name := map[bool]string{false: "Queued", true: "Indexed"}[indexedFirst]
		t.Run("Edit"+name, func(t *testing.T) {
			s := MustOpen(t)
			if _, err := s.PutMessages(ctx, msg(dm, 1, "bob", "old plum"), msg(dm, 2, "bob", "other plum")); err != nil {
				t.Fatal(err)
			}
			if indexedFirst {
				wantFound(t, s, "plum", dm, 2, 1)
			}
			if _, err := s.PutMessages(ctx, ev(3, "bob", wire.KindEdit, 1, "new pear")); err != nil {
				t.Fatal(err)
			}
			wantFound(t, s, "pear", dm, 1)
			wantFound(t, s, "plum", dm, 2)
		})
		t.Run("Delete"+name, func(t *testing.T) {
			s := MustOpen(t)
			if _, err := s.PutMessages(ctx, msg(dm, 1, "bob", "gone plum"), msg(dm, 2, "bob", "kept plum")); err != nil {
				t.Fatal(err)
			}
			if indexedFirst {
				wantFound(t, s, "plum", dm, 2, 1)
			}
			if _, err := s.PutMessages(ctx, ev(3, "bob", wire.KindDelete, 1, "")); err != nil {
				t.Fatal(err)
			}
			wantFound(t, s, "plum", dm, 2)
		})
		t.Run("Trim"+name, func(t *testing.T) {
			s := MustOpen(t)
			for seq := int64(1); seq <= 10; seq++ {
				if _, err := s.PutMessages(ctx, msg(dm, seq, "bob", "fig")); err != nil {
					t.Fatal(err)
				}
			}
			if indexedFirst {
				wantFound(t, s, "fig", dm, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1)
			}
			if _, err := s.TrimMessages(ctx, dm, 8); err != nil {
				t.Fatal(err)
			}
			wantFound(t, s, "fig", dm, 10, 9, 8)
		})
		t.Run("Rollback"+name, func(t *testing.T) {
			s := MustOpen(t)
			if _, err := s.PutMessages(ctx, msg(dm, 1, "bob", "first lime"), msg(dm, 2, "bob", "second lime"), msg(dm, 3, "bob", "lost lime")); err != nil {
				t.Fatal(err)
			}
			if indexedFirst {
				wantFound(t, s, "lime", dm, 3, 2, 1)
			}
			// The server lost seq 3 and the edit that made 2 "second lime".
			current := msg(dm, 2, "bob", "second lemon")
			current.UpdatedSeq = 2
			if _, err := s.ApplyRollback(ctx, Rollback{ConversationID: dm, Last: 2, Current: []wire.Message{current}}); err != nil {
				t.Fatal(err)
			}
			wantFound(t, s, "lime", dm, 1)
			wantFound(t, s, "lemon", dm, 2)
			// The server's new seq 3, stored after the rollback.
			if _, err := s.PutMessages(ctx, wire.Message{ConversationID: dm, SeqNo: 3, MessageID: "other-3", SenderID: "bob",
				Content: "new lime", Timestamp: t0}); err != nil {
				t.Fatal(err)
			}
			wantFound(t, s, "lime", dm, 3, 1)
		})
		t.Run("Refreshed"+name, func(t *testing.T) {
			s := MustOpen(t)
			if _, err := s.PutMessages(ctx, msg(dm, 1, "bob", "stale date")); err != nil {
				t.Fatal(err)
			}
			if indexedFirst {
				wantFound(t, s, "date", dm, 1)
			}
			// A page fetched later has it as an edit left it.
			later := msg(dm, 1, "bob", "fresh olive")
			later.Edited, later.UpdatedSeq = true, 5
			if _, err := s.PutMessages(ctx, later); err != nil {
				t.Fatal(err)
			}
			wantFound(t, s, "olive", dm, 1)
			wantFound(t, s, "date", dm)
		})
	}
}

// A cache at migration 0012 with messages and membership lines still
// waiting in the queues (the triggers put them there) keeps them through
// 0013: the next search finds them, and what is stored after is found too.
func TestSearchQueueAfterMigrationTo13(t *testing.T) {
	path, raw := oldCache(t, 12)
	const grp = "g:crew"
	insertOld(t, raw, append([]wire.Message{msg(grp, 1, "bob", "hello crew")}, membershipEvents(grp)...)...)
	var texts, lines int
	if err := raw.QueryRow(`SELECT (SELECT count(*) FROM search_queue), (SELECT count(*) FROM search_line_queue)`).Scan(&texts, &lines); err != nil {
		t.Fatal(err)
	}
	if texts != 1 || lines != 9 {
		t.Fatalf("at 0012 the triggers queued %d messages and %d lines, want 1 and 9", texts, lines)
	}
	s := openOldCache(t, path, raw)
	if _, err := s.PutMessages(ctx, msg(grp, 11, "bob", "hello again")); err != nil {
		t.Fatal(err)
	}
	wantFound(t, s, "hello", grp, 11, 1)
	wantFound(t, s, "carol added dave", grp, 2)
	wantFound(t, s, "admin", grp, 10, 9)
	if n := countRows(t, s, "message_search"); n != 11 {
		t.Fatalf("the index holds %d rows, want 2 messages and 9 lines", n)
	}
}

// Without search_ids (migration 0013) a hit finds its message through its
// conversation's number, looked up by the docid's high bits, never a walk
// of search_convs for each hit.
func TestSearchHitFindsItsConversationByNumber(t *testing.T) {
	s := MustOpen(t)
	var ms []wire.Message
	for i := range 50 {
		peer := fmt.Sprintf("u%02d", i)
		for seq := int64(1); seq <= 4; seq++ {
			ms = append(ms, msg(wire.DirectConversationID("me", peer), seq, peer, "seed text"))
		}
	}
	if _, err := s.PutMessages(ctx, ms...); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	q, args, err := s.searchQuery(ctx, `"seed*"`, SearchQuery{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	plan := queryPlanSteps(t, s, q, args...)
	if !slices.Contains(plan, "SEARCH s USING INTEGER PRIMARY KEY (rowid=?)") {
		t.Fatalf("search_convs not looked up by number:\n%s", strings.Join(plan, "\n"))
	}
	if hits := mustSearch(t, s, "seed", ""); len(hits) != 10 {
		t.Fatalf("%d hits across the conversations, want a page of 10", len(hits))
	}
}

// A conversation numbered for the index in a commit that fails is not
// remembered under that number: the number goes with the commit, and
// another conversation may take it.
func TestSearchNumberOfAFailedCommitIsNotKept(t *testing.T) {
	s, err := Open(ctx, filepath.Join(t.TempDir(), "cache.db"), Options{UserID: "me"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	failing, cancel := context.WithCancel(ctx)
	s.beforeCommit = func(*sql.Tx) { cancel() }
	if _, err := s.PutMessages(failing, msg(dm, 1, "bob", "lost apple")); err == nil {
		t.Fatal("a commit whose context ended stored its messages")
	}
	s.beforeCommit = nil
	carol := wire.DirectConversationID("me", "carol")
	if _, err := s.PutMessages(ctx, msg(carol, 1, "carol", "carol apple")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutMessages(ctx, msg(dm, 1, "bob", "bob apple")); err != nil {
		t.Fatal(err)
	}
	for conv, want := range map[string]string{dm: "bob apple", carol: "carol apple"} {
		hits := mustSearch(t, s, "apple", conv)
		if len(hits) != 1 || hits[0].Message.Content != want {
			t.Fatalf("apple in %s: %v, want %q alone", conv, hits, want)
		}
	}
}

// A conversation numbered in a commit that rolls back, and looked up again
// in that commit after another conversation's message (A, B, A), must not
// keep its number: the next new conversation takes it, and the two would
// share docids.
func TestSearchNumberSeenTwiceInAFailedCommitIsNotKept(t *testing.T) {
	s, err := Open(ctx, filepath.Join(t.TempDir(), "cache.db"), Options{UserID: "me"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	carol := wire.DirectConversationID("me", "carol")
	dave := wire.DirectConversationID("me", "dave")
	failing, cancel := context.WithCancel(ctx)
	s.beforeCommit = func(*sql.Tx) { cancel() }
	if _, err := s.PutMessages(failing, msg(dm, 1, "bob", "lost apple"), msg(carol, 1, "carol", "lost pear"), msg(dm, 2, "bob", "lost plum")); err == nil {
		t.Fatal("a commit whose context ended stored its messages")
	}
	s.beforeCommit = nil
	if _, err := s.PutMessages(ctx, msg(dave, 1, "dave", "dave apple")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutMessages(ctx, msg(dm, 1, "bob", "bob apple")); err != nil {
		t.Fatal(err)
	}
	for conv, want := range map[string]string{dm: "bob apple", dave: "dave apple"} {
		hits := mustSearch(t, s, "apple", conv)
		if len(hits) != 1 || hits[0].Message.Content != want {
			t.Fatalf("apple in %s: %v, want %q alone", conv, hits, want)
		}
	}
}
