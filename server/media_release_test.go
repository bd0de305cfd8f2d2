package server_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/wire"
)

// Deleting a message deletes its media (files or S3) and gives its bytes
// back to the sender's quota, unless another message carries the same
// upload. An upload whose send was refused stays for the grace period: the
// sender's retry (after a rate limit, or with the text fixed) carries it.
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
			if !kept(shared) {
				t.Fatal("a shared upload was deleted: its carriers are not counted, so it is kept for good")
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
			if !kept(third) || usage() != 2000 {
				t.Fatalf("after a refused send and its retry: blob kept %v, usage %d", kept(third), usage())
			}
			clk.Add(2 * time.Hour)
			if n, err := svc.SweepMediaOnce(ctx); n != 0 || err != nil {
				t.Fatalf("a sweep after the releases: %d, %v; want nothing left to do", n, err)
			}
		})
	}
}
