package tui

import (
	"context"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/chatterm/chat/wire"
)

// The first inbox is painted from the cache alone: Options.AfterInbox (where
// cmd/chat starts the connection) runs once that inbox is in the model, not
// before; the display names the inbox asks the server for wait for it too;
// and an inbox read again later does not run it again.
func TestAfterInboxRunsOnceTheInboxIsLoaded(t *testing.T) {
	be := &afterInboxBackend{fakeBackend: fixture()}
	after := func() tea.Msg {
		time.Sleep(50 * time.Millisecond) // as cmd/chat's waits for the frame
		be.afterRuns.Add(1)
		return nil
	}
	var m tea.Model = New(Options{Backend: be, Now: func() time.Time { return fixtureNow }, Location: time.UTC,
		AfterInbox: after})
	m, _ = m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})

	var loaded tea.Msg
	for _, msg := range runAll(m.Init()) {
		if _, ok := msg.(inboxLoadedMsg); ok {
			loaded = msg
		}
	}
	if loaded == nil {
		t.Fatal("Init did not load the inbox")
	}
	if n := be.afterRuns.Load(); n != 0 {
		t.Fatalf("AfterInbox ran %d times before the inbox was loaded", n)
	}

	m, cmd := m.Update(loaded)
	runAll(cmd)
	if n := be.afterRuns.Load(); n != 1 {
		t.Fatalf("AfterInbox ran %d times after the first inbox, want 1", n)
	}
	if n := be.namesBefore.Load(); n != 0 {
		t.Fatalf("%d display names were asked of the server before AfterInbox had run", n)
	}
	if be.namesAfter.Load() == 0 {
		t.Fatal("the inbox's display names were never asked")
	}

	_, cmd = m.Update(loaded)
	runAll(cmd)
	if n := be.afterRuns.Load(); n != 1 {
		t.Fatalf("AfterInbox ran %d times after a second inbox, want 1", n)
	}
}

// afterInboxBackend counts the names asked before and after AfterInbox ran.
type afterInboxBackend struct {
	*fakeBackend
	afterRuns, namesBefore, namesAfter atomic.Int32
}

func (b *afterInboxBackend) Profile(ctx context.Context, id string) (wire.Profile, error) {
	if b.afterRuns.Load() == 0 {
		b.namesBefore.Add(1)
	} else {
		b.namesAfter.Add(1)
	}
	return b.fakeBackend.Profile(ctx, id)
}

// runAll runs cmd as tea.Program would, batches in parallel and sequences in
// order, and returns the messages (commands that wait by design, such as the
// event pump, are left waiting).
func runAll(cmd tea.Cmd) []tea.Msg { return settle(runCmds([]tea.Cmd{cmd})) }

func settle(msgs []tea.Msg) []tea.Msg {
	var out []tea.Msg
	for _, msg := range msgs {
		switch msg := msg.(type) {
		case nil:
		case tea.BatchMsg:
			out = append(out, settle(runCmds(msg))...)
		default:
			if v := reflect.ValueOf(msg); v.Kind() == reflect.Slice && v.Type().Elem() == reflect.TypeFor[tea.Cmd]() {
				for i := range v.Len() {
					out = append(out, runAll(v.Index(i).Interface().(tea.Cmd))...)
				}
				continue
			}
			out = append(out, msg)
		}
	}
	return out
}
