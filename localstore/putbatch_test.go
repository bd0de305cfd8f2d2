package localstore

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/chatterm/chat/wire"
)

// PutBatch's cursors and senders' boundaries are what reading them after
// the commit gives, and the cursor is where a model of the rule puts it
// (contiguous from the first message the device saw), through gaps filled
// late, batches out of order, redeliveries, conflicts, the user's own
// messages and cursors moved by hand.
func TestPutBatchReportsWhatTheReadsWould(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 28))
			s := MustOpen(t)
			convs := []string{dm, "g:team"}
			senders := []string{"bob", "carol", "me"}
			held := map[string]map[int64]bool{}
			cursor := map[string]int64{} // absent: none yet
			for round := range 40 {
				if rng.IntN(8) == 0 {
					conv := convs[rng.IntN(len(convs))]
					to := int64(rng.IntN(50))
					if err := s.AdvanceCursor(ctx, conv, to); err != nil {
						t.Fatal(err)
					}
					cursor[conv] = max(cursor[conv], to)
					cursor[conv] = walk(held[conv], cursor[conv])
					continue
				}
				var batch []wire.Message
				for range 1 + rng.IntN(12) {
					conv := convs[rng.IntN(len(convs))]
					seq := int64(1 + rng.IntN(60))
					m := msg(conv, seq, senders[seq%3], "x") // one sender a seq_no, as the server has it
					if rng.IntN(15) == 0 && held[conv][seq] {
						m.MessageID = fmt.Sprintf("other-%d", round) // a conflict: not stored
					}
					batch = append(batch, m)
				}
				b, err := s.PutBatch(ctx, batch...)
				if err != nil {
					t.Fatal(err)
				}
				lowest := map[string]int64{}
				for _, m := range b.Added {
					if held[m.ConversationID] == nil {
						held[m.ConversationID] = map[int64]bool{}
					}
					held[m.ConversationID][m.SeqNo] = true
					if l, ok := lowest[m.ConversationID]; !ok || m.SeqNo < l {
						lowest[m.ConversationID] = m.SeqNo
					}
				}
				for conv, low := range lowest {
					if _, ok := cursor[conv]; !ok {
						cursor[conv] = low - 1
					}
					cursor[conv] = walk(held[conv], cursor[conv])
				}
				for _, conv := range convs {
					read, ok, err := s.Cursor(ctx, conv)
					if err != nil {
						t.Fatal(err)
					}
					want, modelled := cursor[conv]
					if ok != modelled || read != want {
						t.Fatalf("round %d: %s cursor read %d (%v), model %d (%v)", round, conv, read, ok, want, modelled)
					}
					inBatch := slices.ContainsFunc(batch, func(m wire.Message) bool { return m.ConversationID == conv })
					got, reported := b.Cursors[conv]
					if inBatch && (reported != ok || got != read) {
						t.Fatalf("round %d: %s cursor reported %d (%v), read %d (%v)", round, conv, got, reported, read, ok)
					}
					if !inBatch && reported {
						t.Fatalf("round %d: %s reported, not in the batch", round, conv)
					}
				}
				type key struct{ conv, user string }
				wantSenders := map[key]bool{}
				for _, m := range b.Added {
					wantSenders[key{m.ConversationID, m.SenderID}] = true
				}
				if len(b.Senders) != len(wantSenders) {
					t.Fatalf("round %d: %d senders reported, want %d", round, len(b.Senders), len(wantSenders))
				}
				for _, ss := range b.Senders {
					if !wantSenders[key{ss.ConversationID, ss.Status.UserID}] {
						t.Fatalf("round %d: reported %s in %s, who sent nothing new", round, ss.Status.UserID, ss.ConversationID)
					}
					read, err := s.MemberStatus(ctx, ss.ConversationID, ss.Status.UserID)
					if err != nil {
						t.Fatal(err)
					}
					if ss.Status != read {
						t.Fatalf("round %d: %s in %s reported %+v, read %+v", round, ss.Status.UserID, ss.ConversationID, ss.Status, read)
					}
				}
			}
		})
	}
}

// walk moves cur over every held seq_no contiguous after it.
func walk(held map[int64]bool, cur int64) int64 {
	for held[cur+1] {
		cur++
	}
	return cur
}

// A sender whose boundary is already past their new message (a status frame
// came first) is reported where the boundary stands, not at the message.
func TestPutBatchSenderAheadOfTheirMessage(t *testing.T) {
	s := MustOpen(t)
	if _, err := s.ApplyStatus(ctx, dm, wire.MemberStatus{UserID: "bob", LastDeliveredSeq: 9, LastReadSeq: 7}); err != nil {
		t.Fatal(err)
	}
	b, err := s.PutBatch(ctx, msg(dm, 5, "bob", "late"))
	if err != nil {
		t.Fatal(err)
	}
	want := []SenderStatus{{ConversationID: dm, Status: wire.MemberStatus{UserID: "bob", LastDeliveredSeq: 9, LastReadSeq: 7}}}
	if !slices.Equal(b.Senders, want) {
		t.Fatalf("senders %+v, want %+v", b.Senders, want)
	}
	if _, err := s.MemberStatus(ctx, dm, "nobody"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("status of a stranger: %v, want ErrNotFound", err)
	}
}

// A member whose own leave event is in the batch has no boundaries after
// it, and is not reported (MemberStatus: ErrNotFound).
func TestPutBatchSenderWhoLeft(t *testing.T) {
	s := MustOpen(t)
	const g = "g:crew"
	left := wire.Message{ConversationID: g, SeqNo: 2, MessageID: "m2", SenderID: "dave", Kind: wire.KindLeft, Timestamp: t0}
	b, err := s.PutBatch(ctx, msg(g, 1, "carol", "hi"), left)
	if err != nil {
		t.Fatal(err)
	}
	want := []SenderStatus{{ConversationID: g, Status: wire.MemberStatus{UserID: "carol", LastDeliveredSeq: 1, LastReadSeq: 1}}}
	if !slices.Equal(b.Senders, want) {
		t.Fatalf("senders %+v, want %+v", b.Senders, want)
	}
	if _, err := s.MemberStatus(ctx, g, "dave"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("dave's status after he left: %v, want ErrNotFound", err)
	}
}
