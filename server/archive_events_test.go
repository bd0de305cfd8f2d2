package server_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/wire"
)

// archiveHistory is a direct conversation between alice and bob with
// messages and every kind of event: a reply, reactions (one taken back),
// two edits long enough to be worth archiving, a short one, a delete.
type archiveHistory struct {
	t    *testing.T
	svc  *server.Service
	conv string
	n    int
}

func newArchiveHistory(t *testing.T, store server.Store, blobs server.BlobStore) *archiveHistory {
	t.Helper()
	svc := serviceOn(t, store, server.Config{SendRate: -1, Backends: server.Backends{Blobs: blobs}})
	registerAliceAndBob(t, svc)
	if _, _, err := svc.CreateConversation(context.Background(), "alice", wire.CreateConversationRequest{Type: wire.Direct, Members: []string{"bob"}}); err != nil {
		t.Fatal(err)
	}
	h := &archiveHistory{t: t, svc: svc, conv: wire.DirectConversationID("alice", "bob")}
	one := h.send("alice", wire.SendRequest{Content: "the first message"})
	two := h.send("bob", wire.SendRequest{Content: "the second message, soon edited"})
	three := h.send("alice", wire.SendRequest{Content: "the third message, soon deleted"})
	four := h.send("alice", wire.SendRequest{Content: "a reply to the first", ReplyTo: one})
	h.send("bob", wire.SendRequest{Kind: wire.KindReaction, TargetSeq: one, Content: "👍"})
	h.send("alice", wire.SendRequest{Kind: wire.KindReaction, TargetSeq: four, Content: "🎉"})
	h.send("alice", wire.SendRequest{Kind: wire.KindReaction, TargetSeq: four, Content: "🎉"}) // taken back
	h.send("bob", wire.SendRequest{Kind: wire.KindEdit, TargetSeq: two, Content: "the second message, as edited the first time, at length"})
	h.send("bob", wire.SendRequest{Kind: wire.KindEdit, TargetSeq: two, Content: "the second message, as edited the second time, at length"})
	h.send("alice", wire.SendRequest{Kind: wire.KindEdit, TargetSeq: four, Content: "short"})
	h.send("alice", wire.SendRequest{Kind: wire.KindDelete, TargetSeq: three})
	return h
}

func (h *archiveHistory) send(user string, req wire.SendRequest) int64 {
	h.t.Helper()
	h.n++
	req.MessageID = fmt.Sprint("m", h.n)
	resp, _, err := h.svc.Send(context.Background(), user, h.conv, req, nil)
	if err != nil {
		h.t.Fatalf("%s sends %+v: %v", user, req, err)
	}
	return resp.SeqNo
}

// read is the whole history as bob reads it, oldest first.
func (h *archiveHistory) read() []wire.Message {
	h.t.Helper()
	r, err := h.svc.History(context.Background(), "bob", h.conv, 0, 0, 100)
	if err != nil {
		h.t.Fatal(err)
	}
	out := r.Messages
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func (h *archiveHistory) rows(store server.Store) []server.Message {
	h.t.Helper()
	rows, err := store.ListMessagesAfter(context.Background(), h.conv, 0, 200)
	if err != nil {
		h.t.Fatal(err)
	}
	return rows
}

func sameHistory(t *testing.T, when string, got, want []wire.Message) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		var b strings.Builder
		for i := range max(len(got), len(want)) {
			var g, w wire.Message
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if !reflect.DeepEqual(g, w) {
				fmt.Fprintf(&b, "\n  got  %+v\n  want %+v", g, w)
			}
		}
		t.Fatalf("%s, history differs:%s", when, b.String())
	}
}

// TestArchiverKeepsHistory: messages and the events that change them go to
// the cold tier, and history reads the same before and after: same seqs,
// the reactions, edits and deletes applied, the events' own text. What
// changes after archiving (a reaction, an edit of an archived message, a
// delete of an edited one) reads the same after the next pass, and the
// deleted message's archived edits leave the cold tier with it.
func TestArchiverKeepsHistory(t *testing.T) {
	for _, b := range mediaBackends {
		t.Run(b.name, func(t *testing.T) {
			store, blobs := b.open(t)
			cold := store.(server.ColdStore)
			ctx := context.Background()
			h := newArchiveHistory(t, store, blobs)
			before := h.read()
			n, err := h.svc.ArchiveOnce(ctx, cold, -time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			// Messages 1, 2, 4 (3 is deleted) and the two long edits.
			if n != 5 {
				t.Fatalf("archived %d rows, want 5", n)
			}
			sameHistory(t, "after archiving", h.read(), before)
			var editRefs []string
			for _, r := range h.rows(store) {
				long := len(r.Content) > len("cold/"+h.conv+"/10.json")
				switch {
				case r.Kind == "" && r.Deleted, r.Kind == wire.KindDelete:
					if r.S3Ref != "" || r.Content != "" {
						t.Fatalf("deleted row %d: %+v", r.SeqNo, r)
					}
				case r.Kind == "", r.Kind == wire.KindEdit && r.S3Ref != "":
					if r.S3Ref == "" || r.Content != "" {
						t.Fatalf("row %d stayed hot: %+v", r.SeqNo, r)
					}
					if r.Kind == wire.KindEdit {
						editRefs = append(editRefs, r.S3Ref)
					}
				case long:
					t.Fatalf("row %d with %d bytes of text stayed hot: %+v", r.SeqNo, len(r.Content), r)
				}
			}
			if len(editRefs) != 2 {
				t.Fatalf("archived edits: %v, want the two long ones", editRefs)
			}
			if due, err := cold.ArchiveDue(ctx, time.Now().Add(time.Hour), 10); err != nil || len(due) != 0 {
				t.Fatalf("still due after a full pass: %v, %v", due, err)
			}
			if n, err := h.svc.ArchiveOnce(ctx, cold, -time.Hour); err != nil || n != 0 {
				t.Fatalf("a second pass with nothing new: %d, %v", n, err)
			}

			// Changes to archived messages.
			h.send("alice", wire.SendRequest{Kind: wire.KindReaction, TargetSeq: 2, Content: "❤"})
			h.send("alice", wire.SendRequest{Kind: wire.KindEdit, TargetSeq: 1, Content: "the first message, edited once archived, at length"})
			h.send("bob", wire.SendRequest{Kind: wire.KindDelete, TargetSeq: 2})
			for _, ref := range editRefs {
				if _, err := blobs.Get(ctx, ref); !errors.Is(err, server.ErrNotFound) {
					t.Fatalf("an archived edit of a deleted message is still in the cold tier (%s): %v", ref, err)
				}
			}
			live := h.read()
			if n, err := h.svc.ArchiveOnce(ctx, cold, -time.Hour); err != nil || n != 2 {
				t.Fatalf("pass after the changes: %d, %v; want the edited message and its edit", n, err)
			}
			sameHistory(t, "after archiving the changes", h.read(), live)
			if m := h.rows(store)[0]; m.S3Ref == "" || m.Content != "" {
				t.Fatalf("the edited archived message was not archived again: %+v", m)
			}
		})
	}
}

// TestArchiverKilledMidRun: an archiver killed between any two of its
// writes (its context cancelled there: after a row's blob is written and
// before its content leaves the table, or before a conversation's watermark
// moves) leaves history reading the same, and the next run carries on to the
// end without losing or repeating a row.
func TestArchiverKilledMidRun(t *testing.T) {
	for _, b := range mediaBackends {
		t.Run(b.name, func(t *testing.T) {
			store, blobs := b.open(t)
			cold := store.(server.ColdStore)
			h := newArchiveHistory(t, store, blobs)
			before := h.read()
			killedAt := map[string]int{}
			total := 0
			for run := 0; ; run++ {
				if run > 100 {
					t.Fatal("the archiver makes no progress when killed")
				}
				ctx, kill := context.WithCancel(context.Background())
				// Killed at the first or the second step in turn: at least one row
				// done per two runs, and the watermark step reached once no row is left.
				at, steps := run%2+1, 0
				h.svc.SetArchiveStepHook(func(step string) {
					if steps++; steps == at {
						killedAt[step]++
						kill()
					}
				})
				n, err := h.svc.ArchiveOnce(ctx, cold, -time.Hour)
				kill()
				total += n
				sameHistory(t, fmt.Sprintf("killed at step %d of run %d", at, run), h.read(), before)
				if err == nil {
					break
				}
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("run %d: %v", run, err)
				}
			}
			h.svc.SetArchiveStepHook(nil)
			if killedAt["mark"] == 0 || killedAt["advance"] == 0 {
				t.Fatalf("kills by step: %v; want some at each", killedAt)
			}
			if total != 5 {
				t.Fatalf("rows archived over the runs: %d, want 5 (each once)", total)
			}
			if due, err := cold.ArchiveDue(context.Background(), time.Now().Add(time.Hour), 10); err != nil || len(due) != 0 {
				t.Fatalf("still due after the last run: %v, %v", due, err)
			}
		})
	}
}

// TestDeleteRacingTheArchiver: a message deleted while the archiver is
// archiving its edit (after the edit's blob is written, before it is marked)
// leaves no text of it in the cold tier.
func TestDeleteRacingTheArchiver(t *testing.T) {
	for _, b := range mediaBackends {
		t.Run(b.name, func(t *testing.T) {
			store, blobs := b.open(t)
			cold := store.(server.ColdStore)
			ctx := context.Background()
			h := &archiveHistory{t: t, svc: serviceOn(t, store, server.Config{SendRate: -1, Backends: server.Backends{Blobs: blobs}})}
			registerAliceAndBob(t, h.svc)
			if _, _, err := h.svc.CreateConversation(ctx, "alice", wire.CreateConversationRequest{Type: wire.Direct, Members: []string{"bob"}}); err != nil {
				t.Fatal(err)
			}
			h.conv = wire.DirectConversationID("alice", "bob")
			one := h.send("alice", wire.SendRequest{Content: "a message soon deleted"})
			edit := h.send("alice", wire.SendRequest{Kind: wire.KindEdit, TargetSeq: one, Content: "its edited text, long enough to be archived"})
			marks := 0
			h.svc.SetArchiveStepHook(func(step string) {
				if step == "mark" {
					if marks++; marks == 2 { // the edit's blob is written
						h.send("alice", wire.SendRequest{Kind: wire.KindDelete, TargetSeq: one})
					}
				}
			})
			if _, err := h.svc.ArchiveOnce(ctx, cold, -time.Hour); err != nil {
				t.Fatal(err)
			}
			if marks < 2 {
				t.Fatalf("the archiver reached %d marks, want the edit's", marks)
			}
			key := "cold/" + h.conv + "/" + fmt.Sprint(edit) + ".json"
			if _, err := blobs.Get(ctx, key); !errors.Is(err, server.ErrNotFound) {
				t.Fatalf("the deleted message's edit is in the cold tier (%s): %v", key, err)
			}
			for _, m := range h.read() {
				if m.Content != "" {
					t.Fatalf("a row of the deleted message reads %+v", m)
				}
			}
		})
	}
}
