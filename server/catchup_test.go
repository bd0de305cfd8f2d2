package server_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/conn"
	"github.com/chatterm/chat/server/protocol"
	"github.com/chatterm/chat/server/sqlite"
	"github.com/chatterm/chat/wire"
)

// failingReads is a real store whose catch-up reads fail while down is set,
// as a DynamoDB behind an open circuit does.
type failingReads struct {
	*sqlite.Store
	down atomic.Bool
}

func (f *failingReads) ListPending(ctx context.Context, userID string) ([]server.Pending, error) {
	if f.down.Load() {
		return nil, fmt.Errorf("store: %w: %w: circuit open", server.ErrUnavailable, server.ErrNotApplied)
	}
	return f.Store.ListPending(ctx, userID)
}

func (f *failingReads) ListMessagesAfter(ctx context.Context, convID string, after int64, limit int) ([]server.Message, error) {
	if f.down.Load() {
		return nil, fmt.Errorf("store: %w: %w: circuit open", server.ErrUnavailable, server.ErrNotApplied)
	}
	return f.Store.ListMessagesAfter(ctx, convID, after, limit)
}

// frameLog collects what the service writes to one connection.
type frameLog struct {
	mu     sync.Mutex
	frames []wire.Frame
}

// watchDevice connects a device of user to eng and logs what it is sent.
func watchDevice(t *testing.T, eng *protocol.Engine, user, device string) (*protocol.Session, *frameLog) {
	t.Helper()
	c, err := eng.Connect(context.Background(), user, "", device)
	if err != nil {
		t.Fatal(err)
	}
	log := &frameLog{}
	log.attach(c)
	return c, log
}

func (l *frameLog) attach(c *protocol.Session) {
	c.SetWriter(func() {
		go func() {
			var out []conn.Frame
			for {
				var closed bool
				out, closed = c.Next(out[:0])
				l.mu.Lock()
				for _, o := range out {
					f, err := wire.DecodeFrame(o.Data)
					if err == nil {
						l.frames = append(l.frames, f)
					}
				}
				l.mu.Unlock()
				if len(out) == 0 || closed {
					return
				}
			}
		}()
	})
}

// find returns the frames that match.
func (l *frameLog) find(match func(wire.Frame) bool) []wire.Frame {
	l.mu.Lock()
	defer l.mu.Unlock()
	var got []wire.Frame
	for _, f := range l.frames {
		if match(f) {
			got = append(got, f)
		}
	}
	return got
}

func (l *frameLog) seqs(conv string) []int64 {
	var seqs []int64
	for _, f := range l.find(func(f wire.Frame) bool {
		return f.Type == wire.TypeMessage && f.Message.ConversationID == conv
	}) {
		seqs = append(seqs, f.Message.SeqNo)
	}
	return seqs
}

// A catch-up or sync the store cannot serve is neither dropped nor answered
// as complete. The sync is answered with an error and "synced" with more set
// (a client that took it as complete would skip past the messages it lacks);
// the connect's catch-up is tried again while the connection lives, so the
// messages arrive once the store is back, with no reconnect and no new message.
func TestCatchUpWhenTheStoreFails(t *testing.T) {
	ctx := context.Background()
	store := &failingReads{Store: openStore(t)}
	svc := serviceOn(t, store, server.Config{SendRate: -1})
	registerAliceAndBob(t, svc)
	conv := wire.DirectConversationID("alice", "bob")
	for i := 1; i <= 3; i++ {
		if _, _, err := svc.Send(ctx, "alice", conv, wire.SendRequest{MessageID: "m" + strconv.Itoa(i), Content: "hi"}, nil); err != nil {
			t.Fatal(err)
		}
	}

	store.down.Store(true)
	eng := engineOf(t, svc)
	bob, log := watchDevice(t, eng, "bob", "bob-1")
	eng.HandleFrame(bob, wire.Frame{Type: wire.TypeSync, ID: "s1", Cursors: []wire.Cursor{{ConversationID: conv, SeqNo: 0}}})
	testenv.WaitFor(t, 5*time.Second, func() bool {
		return len(log.find(func(f wire.Frame) bool { return f.ID == "s1" && f.Type == wire.TypeSynced })) > 0
	})
	errs := log.find(func(f wire.Frame) bool { return f.ID == "s1" && f.Type == wire.TypeError })
	if len(errs) != 1 || !errs[0].Error.Code.Retryable() || errs[0].Error.RetryAfterMs <= 0 {
		t.Fatalf("sync error frames = %+v, want one retryable error with a hint", errs)
	}
	synced := log.find(func(f wire.Frame) bool { return f.ID == "s1" && f.Type == wire.TypeSynced })
	if !synced[0].More {
		t.Fatal("a sync the store could not serve was answered complete (more=false)")
	}
	if got := log.seqs(conv); len(got) != 0 {
		t.Fatalf("messages while the store was down: %v", got)
	}

	store.down.Store(false)
	testenv.WaitFor(t, 10*time.Second, func() bool { return len(log.seqs(conv)) >= 3 })
	if got := log.seqs(conv); fmt.Sprint(got) != "[1 2 3]" {
		t.Fatalf("catch-up after the store came back sent %v, want [1 2 3]", got)
	}

	eng.HandleFrame(bob, wire.Frame{Type: wire.TypeSync, ID: "s2", Cursors: []wire.Cursor{{ConversationID: conv, SeqNo: 3}}})
	testenv.WaitFor(t, 5*time.Second, func() bool {
		return len(log.find(func(f wire.Frame) bool { return f.ID == "s2" && f.Type == wire.TypeSynced })) > 0
	})
	if s := log.find(func(f wire.Frame) bool { return f.ID == "s2" }); len(s) != 1 || s[0].More {
		t.Fatalf("sync with the store back: %+v, want synced, complete", s)
	}
}
