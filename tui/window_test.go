package tui

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// longChat is alice's fixture with a direct chat with dave of n messages,
// "message number N" each, the most recent conversation.
func longChat(n int) (*fakeBackend, string) {
	be := fixture()
	long := wire.DirectConversationID("alice", "dave")
	be.convs[long] = wire.Conversation{ConversationID: long, Type: wire.Direct}
	be.addMessages(long, []string{"dave", "alice"}, n, fixtureNow.Add(-time.Minute), func(i int) string { return fmt.Sprintf("message number %d", i+1) })
	be.inbox = append(be.inbox, wire.InboxEntry{ConversationID: long, Type: wire.Direct, Peer: "dave", LastSeq: int64(n), LastMessageAt: fixtureNow.Add(-time.Minute)})
	return be, long
}

var messageNumber = regexp.MustCompile(`message number (\d+)`)

// onScreen is the message numbers on screen, top to bottom.
func onScreen(h *harness) []int {
	var out []int
	for _, m := range messageNumber.FindAllStringSubmatch(h.screen(), -1) {
		n, _ := strconv.Atoi(m[1])
		out = append(out, n)
	}
	return out
}

// checkWindow fails unless the loaded messages are a contiguous run no longer
// than the window's bound (a page may come in before the far end goes).
func checkWindow(t *testing.T, h *harness) {
	t.Helper()
	msgs := h.root().chat.msgs
	if n := len(msgs); n > maxWindow+windowSlack {
		t.Fatalf("%d messages loaded, past the window's %d", n, maxWindow+windowSlack)
	}
	for i := 1; i < len(msgs); i++ {
		if msgs[i].SeqNo != msgs[i-1].SeqNo+1 {
			t.Fatalf("the window has a gap: %d then %d", msgs[i-1].SeqNo, msgs[i].SeqNo)
		}
	}
}

// From g to the newest with page down, and back up to the first message:
// every message passes over the screen once, in order, while the window
// never holds more than its bound.
func TestWindowScrollsThroughEveryMessageBounded(t *testing.T) {
	const n = 3000
	be, _ := longChat(n)
	// Pages of 200: fewer commands for the harness to wait on, each of
	// which a loaded machine can make it give up on.
	h := newHarnessWith(t, be, 80, 120, func(o *Options) { o.PageSize = 200 })
	h.key("enter", "esc", "g")
	want := 1
	check := func(dir int) {
		t.Helper()
		checkWindow(t, h)
		for _, x := range onScreen(h) {
			// Page down overlaps a line; each new number must be the next one.
			switch {
			case dir > 0 && x < want, dir < 0 && x > want:
			case x == want:
				want += dir
			default:
				t.Fatalf("message %d on screen, want %d next:\n%s", x, want, h.screen())
			}
		}
	}
	check(1)
	for steps := 0; want <= n; steps++ {
		if steps > n {
			c := h.root().chat
			t.Fatalf("page down stopped at message %d (behind %v, loading %v, err %v, %d loaded %d–%d, offset %d, lines %d, gen %d)", want,
				c.behind, c.loadingNewer, c.loadErr, len(c.msgs), c.msgs[0].SeqNo, c.msgs[len(c.msgs)-1].SeqNo, c.offset, len(c.lines), c.windowGen)
		}
		h.key("pgdown")
		check(1)
	}
	if c := h.root().chat; c.behind || c.offset != 0 {
		t.Fatalf("at message %d: behind %v, offset %d; want the newest, at the bottom", n, c.behind, c.offset)
	}
	// And back up: the screen reads bottom to top now.
	want = n
	checkUp := func() {
		t.Helper()
		checkWindow(t, h)
		seen := onScreen(h)
		for i := len(seen) - 1; i >= 0; i-- {
			x := seen[i]
			switch {
			case x > want:
			case x == want:
				want--
			default:
				t.Fatalf("message %d on screen, want %d next:\n%s", x, want, h.screen())
			}
		}
	}
	checkUp()
	for steps := 0; want >= 1; steps++ {
		if steps > n {
			t.Fatalf("page up stopped at message %d", want)
		}
		h.key("pgup")
		checkUp()
	}
	h.wantScreen("beginning of the conversation")
}

// While the window stops short of the newest message, a new one is counted,
// not added below it (that would leave a gap); G shows it.
func TestBehindWindowCountsNewMessages(t *testing.T) {
	be, long := longChat(300)
	h := newHarness(t, be, 80, 24)
	h.key("enter", "esc", "g")
	h.wantScreen("message number 1 ")
	h.deliver(wire.Message{ConversationID: long, SeqNo: 301, MessageID: "d301", SenderID: "dave", Content: "message number 301", Timestamp: fixtureNow})
	checkWindow(t, h)
	if c := h.root().chat; c.msgs[len(c.msgs)-1].SeqNo == 301 {
		t.Fatal("a new message was added below a window that is behind")
	}
	h.wantScreen("↓ 1 new")
	h.key("G")
	h.wantScreen("message number 301")
	checkWindow(t, h)
}

// A chat open at the bottom through a long burst keeps only its newest
// messages loaded, the screen on the newest.
func TestLiveChatStaysBounded(t *testing.T) {
	be, long := longChat(10)
	h := newHarness(t, be, 80, 24)
	h.key("enter")
	var batch eventBatchMsg // as the event pump hands a burst over
	for i := 11; i <= 3000; i++ {
		batch = append(batch, client.MessageEvent{Message: wire.Message{ConversationID: long, SeqNo: int64(i), MessageID: fmt.Sprint("d", i),
			SenderID: "dave", Content: fmt.Sprint("message number ", i), Timestamp: fixtureNow}})
		if len(batch) == 100 || i == 3000 {
			h.send(batch)
			batch = nil
		}
	}
	checkWindow(t, h)
	if got := onScreen(h); len(got) == 0 || got[len(got)-1] != 3000 {
		t.Fatalf("the bottom of the screen is not the newest message:\n%s", h.screen())
	}
	if n := len(h.root().chat.lineCache); n > maxWindow+windowSlack {
		t.Fatalf("%d messages' drawings kept, past the window's bound", n)
	}
	if !strings.Contains(h.screen(), "message number 2999") {
		t.Fatalf("screen:\n%s", h.screen())
	}
}

// An older page asked for before g replaced the window arrives after it:
// it is dropped, not merged into the new window (which it would leave with
// a gap).
func TestStalePageDropped(t *testing.T) {
	be, long := longChat(300)
	h := newHarness(t, be, 80, 24)
	h.key("enter", "esc")
	old := h.root().chat.windowGen
	stale, err := be.History(t.Context(), long, 251, 50)
	if err != nil {
		t.Fatal(err)
	}
	h.key("g")
	h.wantScreen("message number 1 ")
	h.send(historyMsg{conv: long, before: 251, page: stale, gen: old})
	checkWindow(t, h)
	if c := h.root().chat; c.msgs[0].SeqNo != 1 || c.loadingOlder {
		t.Fatalf("after a stale page: window from %d, loading older %v", c.msgs[0].SeqNo, c.loadingOlder)
	}
}
