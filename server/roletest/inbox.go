package roletest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
)

// InboxIndex checks a server.InboxIndex. Times in the tests are whole
// milliseconds apart: implementations may keep millisecond precision.
func InboxIndex(t *testing.T, newIdx func(t *testing.T) server.InboxIndex) {
	base := time.Date(2026, 4, 15, 10, 0, 0, 0, time.UTC)
	at := func(min int) time.Time { return base.Add(time.Duration(min) * time.Minute) }
	entry := func(conv string, min int) server.InboxEntry {
		return server.InboxEntry{Conversation: server.Conversation{ID: conv, LastMessageAt: at(min)}}
	}
	top := func(t *testing.T, x server.InboxIndex, user string, limit int, want ...string) {
		t.Helper()
		got, err := x.Top(ctx(t), user, limit)
		if err != nil {
			t.Fatalf("Top(%d): %v", limit, err)
		}
		if len(want) == 0 {
			want = []string{}
		}
		if got == nil {
			got = []string{}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("Top(%d) = %q, want %q", limit, got, want)
		}
	}
	cold := func(t *testing.T, x server.InboxIndex, user string) {
		t.Helper()
		if got, err := x.Top(ctx(t), user, 10); !errors.Is(err, server.ErrCold) {
			t.Fatalf("Top = %q, %v; want ErrCold", got, err)
		}
	}

	t.Run("OK", func(t *testing.T) {
		x, c := newIdx(t), ctx(t)
		u, a, b, d := id(t, "u"), id(t, "a"), id(t, "b"), id(t, "d")
		if err := x.Fill(c, u, []server.InboxEntry{entry(a, 1), entry(d, 3), entry(b, 2)}); err != nil {
			t.Fatal(err)
		}
		top(t, x, u, 10, d, b, a)
		top(t, x, u, 2, d, b)
		// A send in a moves it to the top; a new conversation comes in at its time.
		if err := x.Touch(c, []string{u}, a, at(4)); err != nil {
			t.Fatal(err)
		}
		top(t, x, u, 10, a, d, b)
		n := id(t, "new")
		if err := x.Touch(c, []string{u}, n, at(5)); err != nil {
			t.Fatal(err)
		}
		top(t, x, u, 10, n, a, d, b)
		// A late Touch with an older time does not push a conversation down.
		if err := x.Touch(c, []string{u}, n, at(0)); err != nil {
			t.Fatal(err)
		}
		top(t, x, u, 10, n, a, d, b)
		if err := x.Forget(c, u, d); err != nil {
			t.Fatal(err)
		}
		top(t, x, u, 10, n, a, b)
	})
	t.Run("Cold", func(t *testing.T) {
		x, c := newIdx(t), ctx(t)
		u := id(t, "u")
		cold(t, x, u)
		// Touch of a cold user is a no-op: the index must not claim a partial inbox.
		if err := x.Touch(c, []string{u}, id(t, "a"), at(1)); err != nil {
			t.Fatal(err)
		}
		cold(t, x, u)
		if err := x.Forget(c, u, id(t, "a")); err != nil {
			t.Fatal(err)
		}
		cold(t, x, u)
	})
	t.Run("TouchSeveral", func(t *testing.T) {
		x, c := newIdx(t), ctx(t)
		warm, coldU, a, b := id(t, "warm"), id(t, "cold"), id(t, "a"), id(t, "b")
		if err := x.Fill(c, warm, []server.InboxEntry{entry(a, 1)}); err != nil {
			t.Fatal(err)
		}
		if err := x.Touch(c, []string{coldU, warm}, b, at(2)); err != nil {
			t.Fatal(err)
		}
		top(t, x, warm, 10, b, a)
		cold(t, x, coldU)
	})
	t.Run("FillEmpty", func(t *testing.T) {
		x, c := newIdx(t), ctx(t)
		u, a := id(t, "u"), id(t, "a")
		if err := x.Fill(c, u, nil); err != nil {
			t.Fatal(err)
		}
		top(t, x, u, 10) // warm and empty, not cold
		if err := x.Touch(c, []string{u}, a, at(1)); err != nil {
			t.Fatal(err)
		}
		top(t, x, u, 10, a)
	})
	t.Run("FillReplaces", func(t *testing.T) {
		x, c := newIdx(t), ctx(t)
		u, a, b, d := id(t, "u"), id(t, "a"), id(t, "b"), id(t, "d")
		if err := x.Fill(c, u, []server.InboxEntry{entry(a, 1), entry(b, 2)}); err != nil {
			t.Fatal(err)
		}
		if err := x.Fill(c, u, []server.InboxEntry{entry(d, 1), entry(a, 0)}); err != nil {
			t.Fatal(err)
		}
		top(t, x, u, 10, d, a)
	})
	t.Run("FillUsesCreatedAt", func(t *testing.T) {
		// A conversation without messages sorts by its creation time.
		x, c := newIdx(t), ctx(t)
		u, a, b := id(t, "u"), id(t, "a"), id(t, "b")
		empty := server.InboxEntry{Conversation: server.Conversation{ID: b, CreatedAt: at(5)}}
		if err := x.Fill(c, u, []server.InboxEntry{entry(a, 3), empty}); err != nil {
			t.Fatal(err)
		}
		top(t, x, u, 10, b, a)
	})
	t.Run("ErrBadInput", func(t *testing.T) {
		x, c := newIdx(t), ctx(t)
		u := id(t, "u")
		if err := x.Fill(c, u, []server.InboxEntry{{}}); err == nil {
			t.Error("Fill with an entry without id succeeded")
		}
		if err := x.Fill(c, u, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := x.Top(c, u, 0); err == nil {
			t.Error("Top with limit 0 succeeded")
		}
	})
}
