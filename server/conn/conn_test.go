package conn

import (
	"slices"
	"strconv"
	"testing"
	"time"
)

func frame(s string) Frame { return Frame{Data: []byte(s), Queued: time.Now()} }

// An idle connection has no writer: the hook runs when frames arrive, once while
// a writer runs, and again after the writer found the queue empty.
func TestConnWriterRunsOnlyWhileFramesAreQueued(t *testing.T) {
	c := New("c1", "alice", "", 4)
	starts := 0
	c.SetWriter(func() { starts++ })
	if starts != 0 {
		t.Fatalf("writer started with nothing queued")
	}
	c.TrySend(frame("a"))
	c.TrySend(frame("b"))
	if starts != 1 {
		t.Fatalf("writer started %d times for two frames, want 1", starts)
	}
	frames, closed := c.Next(nil)
	if closed || len(frames) != 2 || string(frames[0].Data) != "a" || string(frames[1].Data) != "b" {
		t.Fatalf("Next = %d frames, closed %v; want a, b in order", len(frames), closed)
	}
	if frames, closed = c.Next(frames); frames != nil || closed {
		t.Fatalf("Next on an empty queue = %d frames, closed %v; want none (the writer ends)", len(frames), closed)
	}
	c.TrySend(frame("c"))
	if starts != 2 {
		t.Fatalf("no new writer for a frame after the last one ended (starts %d)", starts)
	}
}

// Frames queued before the transport registers its writer are written then.
func TestConnSetWriterStartsForQueuedFrames(t *testing.T) {
	c := New("c1", "alice", "", 4)
	c.TrySend(frame("hello"))
	starts := 0
	c.SetWriter(func() { starts++ })
	if starts != 1 {
		t.Fatalf("SetWriter with a queued frame started %d writers, want 1", starts)
	}
}

// A full queue closes the connection as a slow consumer instead of growing.
func TestConnSlowConsumerIsClosed(t *testing.T) {
	c := New("c1", "alice", "", 2)
	c.SetWriter(func() {}) // a writer that never drains
	for _, s := range []string{"a", "b", "c"} {
		c.TrySend(frame(s))
	}
	select {
	case <-c.Closed():
	default:
		t.Fatal("connection with a full queue is still open")
	}
	if code, _ := c.CloseStatus(); code != ClosePolicy {
		t.Fatalf("close code %d, want %d", code, ClosePolicy)
	}
	frames, closed := c.Next(nil)
	if !closed || len(frames) != 2 {
		t.Fatalf("Next after close = %d frames, closed %v; want the 2 queued and closed", len(frames), closed)
	}
}

// sendWait waits for the writer to make room, and gives up when the connection closes.
func TestConnSendWaitWaitsForRoom(t *testing.T) {
	c := New("c1", "alice", "", 1)
	c.SetWriter(func() {})
	if !c.SendWait(frame("a")) {
		t.Fatal("sendWait on an empty queue failed")
	}
	done := make(chan bool)
	go func() { done <- c.SendWait(frame("b")) }()
	select {
	case <-done:
		t.Fatal("sendWait did not wait on a full queue")
	case <-time.After(50 * time.Millisecond):
	}
	if frames, _ := c.Next(nil); len(frames) != 1 || string(frames[0].Data) != "a" {
		t.Fatalf("Next = %v, want a", frames)
	}
	if ok := <-done; !ok {
		t.Fatal("sendWait failed after the writer made room")
	}
	if frames, _ := c.Next(nil); len(frames) != 1 || string(frames[0].Data) != "b" {
		t.Fatalf("Next = %v, want b", frames)
	}
	c.SendWait(frame("c"))
	go func() { done <- c.SendWait(frame("d")) }()
	time.Sleep(20 * time.Millisecond)
	c.Close(CloseGoingAway, "bye")
	if ok := <-done; ok {
		t.Fatal("sendWait succeeded on a closed connection")
	}
}

// Closing starts a writer even when nothing is queued, so the socket gets closed.
func TestConnCloseStartsWriter(t *testing.T) {
	c := New("c1", "alice", "", 4)
	starts := 0
	c.SetWriter(func() { starts++ })
	c.Close(CloseGoingAway, "shutdown")
	if starts != 1 {
		t.Fatalf("close started %d writers, want 1", starts)
	}
	if frames, closed := c.Next(nil); len(frames) != 0 || !closed {
		t.Fatalf("Next after close = %d frames, closed %v; want none, closed", len(frames), closed)
	}
	c.TrySend(frame("late"))
	if frames, _ := c.Next(nil); len(frames) != 0 {
		t.Fatal("a frame was queued after close")
	}
}

// A message stored just after a device connected is both pending (catch-up sends
// it) and pushed live (held until catch-up ends): it goes out once.
func TestCatchUpDropsHeldCopiesOfWhatItSent(t *testing.T) {
	c := New("c1", "alice", "", 16)
	c.SetWriter(func() {})
	msg := func(conv string, seq int64) Frame {
		return Frame{Data: []byte(conv + "#" + strconv.FormatInt(seq, 10)), Queued: time.Now(), Message: true, ConversationID: conv, SeqNo: seq}
	}
	c.Live(msg("dm:a:b", 5))
	c.Live(msg("dm:a:b", 6))
	c.Live(msg("g:x", 1))
	c.Live(frame("status")) // no place: always released
	c.SendWait(msg("dm:a:b", 5))
	c.CaughtUpTo("dm:a:b", 5)
	c.EndCatchUp()
	frames, _ := c.Next(nil)
	var got []string
	for _, f := range frames {
		got = append(got, string(f.Data))
	}
	if want := []string{"dm:a:b#5", "dm:a:b#6", "g:x#1", "status"}; !slices.Equal(got, want) {
		t.Fatalf("queued %q, want %q", got, want)
	}
	// After catch-up, live frames go straight out, and nothing is filtered.
	c.Live(msg("dm:a:b", 5))
	if frames, _ := c.Next(nil); len(frames) != 1 {
		t.Fatalf("a live frame after catch-up: %d queued, want 1", len(frames))
	}
}

// The catch-up reads a conversation from the device's first undelivered
// message: a live message below that (its own user's, from another device,
// never pending for it) was not sent by the catch-up and goes out.
func TestCatchUpKeepsHeldMessagesBelowWhatItSent(t *testing.T) {
	c := New("c1", "alice", "", 16)
	c.SetWriter(func() {})
	msg := func(seq int64) Frame {
		return Frame{Data: []byte("dm:a:b#" + strconv.FormatInt(seq, 10)), Queued: time.Now(), Message: true, ConversationID: "dm:a:b", SeqNo: seq}
	}
	c.Live(msg(5)) // alice's own, sent from her other device
	c.Live(msg(6)) // bob's: pending for alice
	for _, seq := range []int64{6, 7} {
		c.SendWait(msg(seq))
		c.CaughtUpTo("dm:a:b", seq)
	}
	c.EndCatchUp()
	frames, _ := c.Next(nil)
	var got []string
	for _, f := range frames {
		got = append(got, string(f.Data))
	}
	if want := []string{"dm:a:b#6", "dm:a:b#7", "dm:a:b#5"}; !slices.Equal(got, want) {
		t.Fatalf("queued %q, want %q: the live 5 kept, the live 6 dropped", got, want)
	}
}

// A connection registered after the shutdown closed the hub (its socket was
// accepted just before) is closed at once, with the shutdown's code: it used to
// live on unseen and hold Node.Close until its deadline (a CI failure).
func TestHubClosesConnectionsAddedAfterCloseAll(t *testing.T) {
	h := NewHub()
	before := New("c1", "alice", "", 4)
	h.Add(before)
	h.CloseAll(CloseGoingAway, "server shutting down")
	after := New("c2", "alice", "", 4)
	h.Add(after)
	for _, c := range []*Conn{before, after} {
		if code, reason := c.CloseStatus(); code != CloseGoingAway || reason != "server shutting down" {
			t.Errorf("%s: close status %d %q, want %d", c.ID, code, reason, CloseGoingAway)
		}
	}
	if got := h.Count(); got != 1 {
		t.Errorf("hub holds %d connections, want only the one added before (which Remove takes out)", got)
	}
}
