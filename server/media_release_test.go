package server_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/wire"
)

// Deleting a message deletes its media (files or S3) and gives its bytes
// back to the sender's quota once no other message carries the same upload:
// one sent twice goes with its second message. An upload whose send was
// refused stays for the grace period: the sender's retry (after a rate
// limit, or with the text fixed) carries it.
func TestDeletingAMessageReleasesItsMedia(t *testing.T) {
	for _, b := range mediaBackends {
		t.Run(b.name, func(t *testing.T) {
			store, blobs := b.open(t)
			clk := &clock{now: time.Now()}
			svc := serviceOn(t, store, server.Config{SendRate: -1, Now: clk.Now, Backends: server.Backends{Blobs: blobs},
				MediaQuota: 3000, MediaRate: -1, MaxMediaBytes: 1000, MediaUnsentTTL: time.Hour})
			registerAliceAndBob(t, svc)
			ctx := context.Background()
			conv := wire.DirectConversationID("alice", "bob")
			if _, _, err := svc.CreateConversation(ctx, "alice", wire.CreateConversationRequest{Type: wire.Direct, Members: []string{"bob"}}); err != nil {
				t.Fatal(err)
			}
			body := bytes.Repeat([]byte("x"), 1000)
			newUpload := func() string {
				t.Helper()
				up, err := svc.CreateMedia(ctx, "alice", wire.MediaRequest{ContentType: "application/octet-stream", Size: 1000})
				if err != nil {
					t.Fatal(err)
				}
				upload(t, up.UploadURL, "application/octet-stream", body)
				return up.MediaID
			}
			send := func(id, media string) int64 {
				t.Helper()
				r, _, err := svc.Send(ctx, "alice", conv, wire.SendRequest{MessageID: id, Content: "file", Attachment: media}, nil)
				if err != nil {
					t.Fatalf("send %s: %v", id, err)
				}
				return r.SeqNo
			}
			del := func(seq int64) {
				t.Helper()
				if _, _, err := svc.Send(ctx, "alice", conv, wire.SendRequest{MessageID: "del-" + time.Now().Format("150405.000000000"), Kind: wire.KindDelete, TargetSeq: seq}, nil); err != nil {
					t.Fatalf("delete %d: %v", seq, err)
				}
			}
			usage := func() int64 {
				t.Helper()
				u, err := svc.MediaUsage(ctx, "alice", "")
				if err != nil {
					t.Fatal(err)
				}
				return u.Bytes
			}
			kept := func(media string) bool {
				t.Helper()
				got, err := blobs.Get(ctx, media)
				if errors.Is(err, server.ErrNotFound) {
					return false
				}
				if err != nil || !bytes.Equal(got, body) {
					t.Fatalf("blob %s: %d bytes, %v", media, len(got), err)
				}
				return true
			}

			one, shared := newUpload(), newUpload()
			seq1 := send("m1", one)
			seq2, seq3 := send("m2", shared), send("m3", shared)
			if u := usage(); u != 2000 {
				t.Fatalf("usage after two uploads sent: %d, want 2000", u)
			}
			del(seq1)
			if kept(one) || usage() != 1000 {
				t.Fatalf("after deleting its message: blob kept %v, usage %d; want the blob gone and 1000 bytes", kept(one), usage())
			}
			// Carried by two messages: deleting one keeps it for the other.
			del(seq2)
			if !kept(shared) || usage() != 1000 {
				t.Fatalf("after deleting one of two carriers: blob kept %v, usage %d; want it kept, 1000", kept(shared), usage())
			}
			if _, err := svc.MediaURL(ctx, "bob", shared); err != nil {
				t.Fatalf("bob's download of the still-carried file: %v", err)
			}
			del(seq3)
			if kept(shared) || usage() != 0 {
				t.Fatalf("after deleting both carriers: blob kept %v, usage %d; want it gone and 0 bytes", kept(shared), usage())
			}
			// A released upload cannot be sent again.
			if _, _, err := svc.Send(ctx, "alice", conv, wire.SendRequest{MessageID: "m4", Content: "again", Attachment: one}, nil); code(err) != wire.CodeNotFound {
				t.Fatalf("sending a released upload = %v, want not_found", err)
			}

			// A refused send leaves its upload for the retry.
			third := newUpload()
			if _, _, err := svc.Send(ctx, "alice", "g:nope", wire.SendRequest{MessageID: "m5", Content: "file", Attachment: third}, nil); err == nil {
				t.Fatal("a send to a conversation alice is not in was stored")
			}
			send("m5", third)
			if !kept(third) || usage() != 1000 {
				t.Fatalf("after a refused send and its retry: blob kept %v, usage %d", kept(third), usage())
			}
			clk.Add(2 * time.Hour)
			if n, err := svc.SweepMediaOnce(ctx); n != 0 || err != nil {
				t.Fatalf("a sweep after the releases: %d, %v; want nothing left to do", n, err)
			}
		})
	}
}

// A send that failed after its upload was linked (overloaded here; a store
// that refused the write, a conversation that could not be made) gives the
// upload back to the unsent ones, from the failure: the resend with the same
// message_id that `chat send` and the TUI's outbox make links it again and
// keeps it; an upload whose send is never made again is deleted by the sweep
// a grace period later and its bytes given back. Left linked, it counted
// against its owner for good.
func TestFailedSendUnlinksItsUpload(t *testing.T) {
	for _, b := range mediaBackends {
		t.Run(b.name, func(t *testing.T) {
			store, blobs := b.open(t)
			clk := &clock{now: time.Now()}
			svc := serviceOn(t, store, server.Config{SendRate: -1, Now: clk.Now, Backends: server.Backends{Blobs: blobs},
				MediaQuota: 3000, MediaRate: -1, MaxMediaBytes: 1000, MediaUnsentTTL: time.Hour, MaxInFlight: 1})
			registerAliceAndBob(t, svc)
			ctx := context.Background()
			conv := wire.DirectConversationID("alice", "bob")
			if _, _, err := svc.CreateConversation(ctx, "alice", wire.CreateConversationRequest{Type: wire.Direct, Members: []string{"bob"}}); err != nil {
				t.Fatal(err)
			}
			body := bytes.Repeat([]byte("x"), 1000)
			newUpload := func() string {
				t.Helper()
				up, err := svc.CreateMedia(ctx, "alice", wire.MediaRequest{ContentType: "application/octet-stream", Size: 1000})
				if err != nil {
					t.Fatal(err)
				}
				upload(t, up.UploadURL, "application/octet-stream", body)
				return up.MediaID
			}
			abandoned, resent := newUpload(), newUpload()

			// One send in flight holds the only slot: the next ones are
			// refused, overloaded, after their attachments were linked.
			unlock := svc.LockConversation(conv)
			first := make(chan error, 1)
			go func() {
				_, _, err := svc.Send(ctx, "alice", conv, wire.SendRequest{MessageID: "held", Content: "waits for the lock"}, nil)
				first <- err
			}()
			testenv.WaitFor(t, 5*time.Second, func() bool { return svc.InFlight() == 1 })
			for _, c := range []struct{ id, media string }{{"m1", abandoned}, {"m2", resent}} {
				_, _, err := svc.Send(ctx, "alice", conv, wire.SendRequest{MessageID: c.id, Content: "file", Attachment: c.media}, nil)
				if code(err) != wire.CodeOverloaded {
					t.Fatalf("send %s with one in flight: %v, want overloaded", c.id, err)
				}
			}
			unlock()
			if err := <-first; err != nil {
				t.Fatal(err)
			}
			// Half the grace period later the resend comes, and is stored.
			clk.Add(30 * time.Minute)
			if _, _, err := svc.Send(ctx, "alice", conv, wire.SendRequest{MessageID: "m2", Content: "file", Attachment: resent}, nil); err != nil {
				t.Fatalf("the resend: %v", err)
			}
			// Past the grace period, counted from the failure: the abandoned
			// upload goes, the resent one stays.
			clk.Add(45 * time.Minute)
			if n, err := svc.SweepMediaOnce(ctx); n != 1 || err != nil {
				t.Fatalf("sweep: deleted %d, %v; want the abandoned upload", n, err)
			}
			if _, err := blobs.Get(ctx, abandoned); !errors.Is(err, server.ErrNotFound) {
				t.Fatalf("the abandoned upload's blob: %v, want it deleted", err)
			}
			if _, err := blobs.Get(ctx, resent); err != nil {
				t.Fatalf("the resent upload's blob: %v, want it kept", err)
			}
			if u, err := svc.MediaUsage(ctx, "alice", ""); err != nil || u.Bytes != 1000 || u.Uploads != 1 {
				t.Fatalf("usage %+v, %v; want the resent upload's 1000 bytes only", u, err)
			}
		})
	}
}

// An archived message (server/archive.go: its text in the cold tier) keeps
// its attachment in the table, so deleting it releases its media as for any
// message: the blob goes and its bytes come back to the quota. So does its
// archived text.
func TestDeletingAnArchivedMessageReleasesItsMedia(t *testing.T) {
	for _, b := range mediaBackends {
		t.Run(b.name, func(t *testing.T) {
			store, blobs := b.open(t)
			svc := serviceOn(t, store, server.Config{SendRate: -1, Backends: server.Backends{Blobs: blobs},
				MediaQuota: 3000, MediaRate: -1, MaxMediaBytes: 1000})
			registerAliceAndBob(t, svc)
			ctx := context.Background()
			conv := wire.DirectConversationID("alice", "bob")
			if _, _, err := svc.CreateConversation(ctx, "alice", wire.CreateConversationRequest{Type: wire.Direct, Members: []string{"bob"}}); err != nil {
				t.Fatal(err)
			}
			up, err := svc.CreateMedia(ctx, "alice", wire.MediaRequest{ContentType: "application/octet-stream", Size: 1000})
			if err != nil {
				t.Fatal(err)
			}
			upload(t, up.UploadURL, "application/octet-stream", bytes.Repeat([]byte("x"), 1000))
			sent, _, err := svc.Send(ctx, "alice", conv, wire.SendRequest{MessageID: "m1", Content: "the file", Attachment: up.MediaID}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if n, err := svc.ArchiveOnce(ctx, store.(server.ColdStore), -time.Hour); err != nil || n != 1 {
				t.Fatalf("archived %d rows, %v; want the message", n, err)
			}
			msgs, err := store.ListMessages(ctx, conv, sent.SeqNo+1, 1)
			if err != nil || len(msgs) != 1 || msgs[0].S3Ref == "" || msgs[0].Attachment != up.MediaID {
				t.Fatalf("the archived row: %+v, %v; want its text in the cold tier and the attachment kept", msgs, err)
			}
			textKey := msgs[0].S3Ref
			if _, _, err := svc.Send(ctx, "alice", conv, wire.SendRequest{MessageID: "del", Kind: wire.KindDelete, TargetSeq: sent.SeqNo}, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := blobs.Get(ctx, up.MediaID); !errors.Is(err, server.ErrNotFound) {
				t.Fatalf("the deleted archived message's media: %v, want it deleted", err)
			}
			if _, err := blobs.Get(ctx, textKey); !errors.Is(err, server.ErrNotFound) {
				t.Fatalf("the deleted archived message's text: %v, want it deleted", err)
			}
			if u, err := svc.MediaUsage(ctx, "alice", ""); err != nil || u.Bytes != 0 || u.Uploads != 0 {
				t.Fatalf("usage %+v, %v; want 0: the archived message's media given back", u, err)
			}
		})
	}
}
