package client

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chatterm/chat/localstore"
	"github.com/chatterm/chat/wire"
)

// batchSession is a session and a link with no connection behind them, for
// handing handle a batch of frames as the reader would.
func batchSession(t *testing.T) (*Session, *link) {
	t.Helper()
	store := localstore.MustOpen(t, localstore.Options{UserID: "me"})
	s := NewSession(SessionConfig{API: NewAPI("http://127.0.0.1:1", "", nil), Store: store, AckDelay: time.Hour, EventBuffer: 1024})
	ctx, cancel := context.WithCancelCause(context.Background())
	t.Cleanup(func() { cancel(nil) })
	l := &link{out: make(chan wire.Frame, 1024), ctx: ctx, cancel: cancel, sent: map[string]bool{},
		acked: map[string]int64{}, ackDue: map[string]int64{}, gapped: map[string]bool{}, holes: map[string]hole{}}
	return s, l
}

func messageFrame(m wire.Message) wire.Frame { return wire.Frame{Type: wire.TypeMessage, Message: &m} }

func statusFrame(conv, user string, delivered int64) wire.Frame {
	return wire.Frame{Type: wire.TypeStatus, ConversationID: conv,
		Status: &wire.MemberStatus{UserID: user, LastDeliveredSeq: delivered}}
}

// eventsSoFar lists what the session reported, in order, as short strings.
func eventsSoFar(s *Session) []string {
	var out []string
	for {
		select {
		case ev := <-s.events:
			switch ev := ev.(type) {
			case MessageEvent:
				out = append(out, fmt.Sprintf("message %d", ev.Message.SeqNo))
			case StatusEvent:
				out = append(out, fmt.Sprintf("status %s %d/%d", ev.Status.UserID, ev.Status.LastDeliveredSeq, ev.Status.LastReadSeq))
			}
		default:
			return out
		}
	}
}

// In a group every member's ack comes to every member as a status frame,
// between the messages of a burst. Another member's boundary does not cut the
// run of messages: the messages are stored together and the boundaries after
// them, ending as arrival order would.
func TestHandleDefersOthersBoundariesPastMessages(t *testing.T) {
	s, l := batchSession(t)
	const g = "g:crew"
	m := func(seq int64) wire.Message {
		return wire.Message{ConversationID: g, SeqNo: seq, MessageID: fmt.Sprint("m", seq), SenderID: "carol", Content: "hi", Timestamp: time.Unix(seq, 0)}
	}
	batch := []wire.Frame{messageFrame(m(1)), statusFrame(g, "dave", 1), messageFrame(m(2)), statusFrame(g, "erin", 2), messageFrame(m(3))}
	if err := s.handle(context.Background(), l, batch); err != nil {
		t.Fatal(err)
	}
	got := eventsSoFar(s)
	want := []string{"message 1", "message 2", "message 3", "status carol 3/3", "status dave 1/0", "status erin 2/0"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events %q,\nwant %q: the messages as one run, the boundaries after", got, want)
	}
	sts, err := s.store.Statuses(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(sts) != "[{carol 3 3} {dave 1 0} {erin 2 0}]" {
		t.Errorf("boundaries %v", sts)
	}
	if cur, _, _ := s.store.Cursor(context.Background(), g); cur != 3 {
		t.Errorf("cursor %d, want 3", cur)
	}
}

// What may not move past a message keeps its place: the user's own boundary
// (it moves the inbox's unread count), and any boundary that came before a
// membership event (a member who leaves loses theirs, and one applied after
// would bring it back).
func TestHandleKeepsOrderAroundOwnAndMembership(t *testing.T) {
	const g = "g:crew"
	msg := wire.Message{ConversationID: g, SeqNo: 1, MessageID: "m1", SenderID: "carol", Content: "hi", Timestamp: time.Unix(1, 0)}
	again := wire.Message{ConversationID: g, SeqNo: 2, MessageID: "m2", SenderID: "carol", Content: "again", Timestamp: time.Unix(2, 0)}
	left := wire.Message{ConversationID: g, SeqNo: 2, MessageID: "m2", SenderID: "dave", Kind: wire.KindLeft, Timestamp: time.Unix(2, 0)}
	for _, tc := range []struct {
		name  string
		batch []wire.Frame
		want  []string
	}{
		{"own boundary", []wire.Frame{messageFrame(msg), statusFrame(g, "me", 1), messageFrame(again)},
			[]string{"message 1", "status carol 1/1", "status me 1/0", "message 2", "status carol 2/2"}},
		{"membership", []wire.Frame{messageFrame(msg), statusFrame(g, "dave", 1), messageFrame(left)},
			[]string{"message 1", "status carol 1/1", "status dave 1/0", "message 2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, l := batchSession(t)
			if err := s.handle(context.Background(), l, tc.batch); err != nil {
				t.Fatal(err)
			}
			if got := eventsSoFar(s); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("events %q,\nwant %q", got, tc.want)
			}
			sts, err := s.store.Statuses(context.Background(), g)
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range sts {
				if st.UserID == "dave" {
					t.Errorf("boundaries %v: dave left, after his boundary came", sts)
				}
			}
		})
	}
}
