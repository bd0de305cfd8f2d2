package e2e

import (
	"fmt"
	"sync"
	"testing"

	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// TestPipelinedSendsKeepOrder: two devices write many sends without waiting for
// answers, into two conversations at once, so the server takes them from the
// connection's queue in batches. Every send gets exactly one answer; a bad one
// fails alone and a resent message_id gets the first seq; each conversation
// stores and delivers one device's messages in the order they were sent.
func TestPipelinedSendsKeepOrder(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob, carol := register(t, srv, "alice"), register(t, srv, "bob"), register(t, srv, "carol")
	dm := alice.direct("bob")
	group := alice.group("pipe", "bob", "carol")
	bws, cws := dial(t, bob), dial(t, carol)

	const per = 60
	var mu sync.Mutex
	answers := map[string][]sent{} // by sender, in send order
	var wg sync.WaitGroup
	for _, who := range []*api{alice, carol} {
		wg.Go(func() {
			ws := dial(t, who)
			ids := make([]string, 0, 2*per+2)
			want := map[string]sent{}
			for i := range per {
				for _, conv := range []string{dm, group} {
					if conv == dm && who != alice {
						continue
					}
					msgID := fmt.Sprintf("%s-%s-%d", who.user, conv[:2], i)
					id := ws.send(conv, msgID, fmt.Sprintf("%d", i))
					ids = append(ids, id)
					want[id] = sent{conv: conv, msgID: msgID}
				}
			}
			// A resend of the first group message and an empty one, behind the rest.
			dupID := ws.send(group, fmt.Sprintf("%s-g:-0", who.user), "0")
			badID := ws.id()
			ws.write(wire.Frame{Type: wire.TypeSend, ID: badID, ConversationID: group, MessageID: "empty-" + who.user})
			got := map[string]wire.Frame{}
			for len(got) < len(ids)+2 {
				f := ws.next(func(f wire.Frame) bool { return f.ID != "" })
				if _, twice := got[f.ID]; twice {
					t.Errorf("request %s answered twice", f.ID)
				}
				got[f.ID] = f
			}
			if f := got[badID]; f.Type != wire.TypeError || f.Error.Code != wire.CodeInvalid {
				t.Errorf("empty send answered %+v, want an invalid error", f)
			}
			var order []sent
			for _, id := range ids {
				f := got[id]
				if f.Type != wire.TypeSent {
					t.Errorf("send %s answered %+v", id, f)
					return
				}
				s := want[id]
				s.seq = f.SeqNo
				order = append(order, s)
			}
			if f := got[dupID]; f.Type != wire.TypeSent || f.SeqNo != order[firstIn(order, group)].seq {
				t.Errorf("resend answered %+v, want the first group message's seq %d", f, order[firstIn(order, group)].seq)
			}
			mu.Lock()
			answers[who.user] = order
			mu.Unlock()
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	// Per sender and conversation, seqs rise in send order.
	for user, order := range answers {
		last := map[string]int64{}
		for _, s := range order {
			if s.seq <= last[s.conv] {
				t.Fatalf("%s's sends to %s stored out of order: seq %d after %d", user, s.conv, s.seq, last[s.conv])
			}
			last[s.conv] = s.seq
		}
	}
	// Bob receives each conversation in strictly increasing seq, every message
	// once. He does not ack, so a message he has not read a grace period
	// (servertest's RedeliverAfter, 1 s) after it was stored comes again: a
	// copy of a seq he holds is at-least-once delivery, which clients dedupe,
	// not a reordering (a slow run, as under CI, reads past the grace period).
	wantCount := map[string]int{dm: per, group: 2 * per}
	seen := map[string]int64{}
	held := map[string]map[int64]bool{dm: {}, group: {}}
	count := map[string]int{}
	for count[dm] < wantCount[dm] || count[group] < wantCount[group] {
		f := bws.next(func(f wire.Frame) bool { return f.Type == wire.TypeMessage })
		c := f.Message.ConversationID
		if held[c][f.Message.SeqNo] {
			continue
		}
		if f.Message.SeqNo <= seen[c] {
			t.Fatalf("bob got %s seq %d after %d", c, f.Message.SeqNo, seen[c])
		}
		held[c][f.Message.SeqNo] = true
		seen[c] = f.Message.SeqNo
		count[c]++
	}
	h1 := alice.history(group, 0, 100)
	h2 := alice.history(group, h1.NextBeforeSeq, 100)
	if n := len(h1.Messages) + len(h2.Messages); n != 2*per {
		t.Fatalf("group stores %d messages, want %d (no resend, no empty one)", n, 2*per)
	}
	// Carol's other device gets every group message (her own too) in order.
	var last int64
	carolHeld := map[int64]bool{}
	for len(carolHeld) < 2*per {
		f := cws.next(isMessage(group))
		if carolHeld[f.Message.SeqNo] {
			continue // a copy after the grace period, as for bob
		}
		if f.Message.SeqNo <= last {
			t.Fatalf("carol got seq %d after %d", f.Message.SeqNo, last)
		}
		carolHeld[f.Message.SeqNo] = true
		last = f.Message.SeqNo
	}
}

// sent is one send as its device saw it: where, which, and the seq answered.
type sent struct {
	conv, msgID string
	seq         int64
}

func firstIn(order []sent, conv string) int {
	for i, s := range order {
		if s.conv == conv {
			return i
		}
	}
	return -1
}
