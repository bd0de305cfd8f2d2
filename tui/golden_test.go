package tui

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/chatterm/chat/client"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares a screen, colour stripped, with testdata/<name>.golden.
// Run `go test ./tui -run Golden -update` to rewrite them after a deliberate
// change, and read the diff before committing.
func golden(t *testing.T, name, screen string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(screen), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run with -update to create it): %v", err)
	}
	if string(want) != screen {
		t.Errorf("screen differs from %s (run with -update to accept)\n--- want\n%s\n--- got\n%s", path, want, screen)
	}
}

// checkFrame asserts the screen is exactly w×h cells: a resize must leave no
// stale cells and no line may wrap.
func checkFrame(t *testing.T, screen string, w, h int) {
	t.Helper()
	lines := strings.Split(screen, "\n")
	if len(lines) != h {
		t.Fatalf("screen has %d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if got := ansi.StringWidth(l); got != w {
			t.Fatalf("line %d is %d cells wide, want %d: %q", i, got, w, l)
		}
	}
}

func TestGoldenInbox(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	checkFrame(t, h.screen(), 80, 24)
	golden(t, "inbox", h.screen())
}

func TestGoldenChat(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	h.key("enter") // bob is on top: the most recent activity
	checkFrame(t, h.screen(), 80, 24)
	golden(t, "chat_direct", h.screen())
}

func TestGoldenGroupChat(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	h.key("j", "enter")
	golden(t, "chat_group", h.screen())
}

func TestGoldenHelp(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	h.key("?")
	checkFrame(t, h.screen(), 80, 24)
	golden(t, "help", h.screen())
}

func TestGoldenFinder(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	h.key("ctrl+k")
	h.typeText("b")
	golden(t, "finder", h.screen())
}

func TestGoldenNewGroup(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	h.key("N")
	h.typeText("launch")
	h.key("tab")
	h.typeText("bob, carol")
	golden(t, "new_group", h.screen())
}

func TestGoldenMembers(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	h.key("j", "enter", "esc", "m")
	golden(t, "members", h.screen())
}

func TestGoldenLogin(t *testing.T) {
	be := fixture()
	be.user = ""
	h := newHarness(t, be, 80, 24)
	checkFrame(t, h.screen(), 80, 24)
	golden(t, "login", h.screen())
	h.key("ctrl+r")
	golden(t, "register", h.screen())
}

func TestGoldenWideChatWithSidebar(t *testing.T) {
	h := newHarness(t, fixture(), 120, 30)
	h.key("j", "enter") // team; bob's unread count shows in the sidebar
	checkFrame(t, h.screen(), 120, 30)
	golden(t, "chat_wide", h.screen())
}

func TestGoldenChatOfflinePending(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	h.key("enter")
	h.send(client.StateEvent{State: client.State{Status: client.Reconnecting, RetryAt: fixtureNow.Add(7 * time.Second)}})
	h.typeText("on the train, will sync later")
	h.key("enter")
	h.send(client.StateEvent{State: client.State{Status: client.Reconnecting, RetryAt: fixtureNow.Add(7 * time.Second), Unsent: 1}})
	golden(t, "chat_offline_pending", h.screen())
}
