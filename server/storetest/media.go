package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
)

// reserve records up, adding its size to its owner's usage.
func reserve(t *testing.T, s server.Store, up server.MediaUpload) server.MediaUsage {
	t.Helper()
	ctx := context.Background()
	was, err := s.MediaUsage(ctx, up.Owner)
	must(t, err)
	next := was
	next.Bytes += up.Size
	next.Uploads++
	next.Version++
	next.RateAt = up.CreatedAt.Add(time.Second)
	must(t, s.ReserveMedia(ctx, up, was, next))
	return next
}

func testMediaUploads(t *testing.T, s server.Store) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		if u, err := s.MediaUsage(ctx, "nobody"); err != nil || u != (server.MediaUsage{}) {
			t.Fatalf("usage of a user who never uploaded = %+v, %v; want zero", u, err)
		}
		reserve(t, s, server.MediaUpload{MediaID: "media/ann/a1", Owner: "ann", Size: 100, CreatedAt: t0})
		want := reserve(t, s, server.MediaUpload{MediaID: "media/ann/a2", Owner: "ann", Size: 50, CreatedAt: t0.Add(time.Minute)})
		got, err := s.MediaUsage(ctx, "ann")
		must(t, err)
		if got.Bytes != 150 || got.Uploads != 2 || !got.RateAt.Equal(want.RateAt) || got.Version != want.Version {
			t.Fatalf("usage %+v, want %+v", got, want)
		}
	})
	t.Run("ErrRaced", func(t *testing.T) {
		stale, err := s.MediaUsage(ctx, "ben")
		must(t, err)
		reserve(t, s, server.MediaUpload{MediaID: "media/ben/b1", Owner: "ben", Size: 10, CreatedAt: t0})
		next := stale
		next.Bytes, next.Uploads, next.Version = 10, 1, stale.Version+1
		err = s.ReserveMedia(ctx, server.MediaUpload{MediaID: "media/ben/b2", Owner: "ben", Size: 10, CreatedAt: t0}, stale, next)
		if !errors.Is(err, server.ErrRaced) {
			t.Fatalf("ReserveMedia on a stale usage = %v, want ErrRaced", err)
		}
		// Nothing was written: the upload is unknown, the usage as it was.
		if _, err := s.LinkMedia(ctx, "media/ben/b2", "g:x", "m1"); !errors.Is(err, server.ErrNotFound) {
			t.Fatalf("the refused upload was recorded: LinkMedia = %v", err)
		}
		if u, _ := s.MediaUsage(ctx, "ben"); u.Bytes != 10 || u.Uploads != 1 {
			t.Fatalf("usage after a refused reservation %+v", u)
		}
	})
	t.Run("Sweep", func(t *testing.T) {
		// Old unsent, old sent, new unsent: only the first is the sweep's.
		reserve(t, s, server.MediaUpload{MediaID: "media/cy/old", Owner: "cy", Size: 7, CreatedAt: t0})
		reserve(t, s, server.MediaUpload{MediaID: "media/cy/sent", Owner: "cy", Size: 5, CreatedAt: t0})
		reserve(t, s, server.MediaUpload{MediaID: "media/cy/new", Owner: "cy", Size: 3, CreatedAt: t0.Add(2 * time.Hour)})
		linkMedia(t, s, "media/cy/sent", "g:cy", "m1")
		ups, err := s.UnsentMedia(ctx, t0.Add(time.Hour), 100)
		must(t, err)
		var mine []server.MediaUpload
		for _, up := range ups {
			if up.Owner == "cy" {
				mine = append(mine, up)
			}
		}
		if len(mine) != 1 || mine[0].MediaID != "media/cy/old" || mine[0].Size != 7 || !mine[0].CreatedAt.Equal(t0) {
			t.Fatalf("unsent before t0+1h: %+v, want media/cy/old only", mine)
		}
		if err := s.ExpireMedia(ctx, "media/cy/sent"); !errors.Is(err, server.ErrNotApplied) {
			t.Fatalf("ExpireMedia of a sent upload = %v, want ErrNotApplied", err)
		}
		if err := s.ExpireMedia(ctx, "media/cy/none"); !errors.Is(err, server.ErrNotFound) {
			t.Fatalf("ExpireMedia of an unknown upload = %v, want ErrNotFound", err)
		}
		must(t, s.ExpireMedia(ctx, "media/cy/old"))
		must(t, s.ExpireMedia(ctx, "media/cy/old")) // again: no error
		// Expiring: no send can carry it now, and the next sweep still sees it.
		if _, err := s.LinkMedia(ctx, "media/cy/old", "g:cy", "m2"); !errors.Is(err, server.ErrNotFound) {
			t.Fatalf("LinkMedia of an expiring upload = %v, want ErrNotFound", err)
		}
		if ups, _ := s.UnsentMedia(ctx, t0.Add(time.Hour), 100); !hasUpload(ups, "media/cy/old") {
			t.Fatalf("an expiring upload left the sweep's view: %+v", ups)
		}
		must(t, s.DropMedia(ctx, mine[0]))
		must(t, s.DropMedia(ctx, mine[0])) // again: nothing counted twice
		u, err := s.MediaUsage(ctx, "cy")
		must(t, err)
		if u.Bytes != 8 || u.Uploads != 2 {
			t.Fatalf("usage after the sweep %+v, want 8 bytes in 2 uploads", u)
		}
		if ups, _ := s.UnsentMedia(ctx, t0.Add(3*time.Hour), 100); hasUpload(ups, "media/cy/old") || !hasUpload(ups, "media/cy/new") {
			t.Fatalf("unsent after the drop: %+v", ups)
		}
		// A dropped usage still takes a reservation by its version.
		reserve(t, s, server.MediaUpload{MediaID: "media/cy/again", Owner: "cy", Size: 1, CreatedAt: t0})
	})
	t.Run("Release", func(t *testing.T) {
		// dee's upload carried by one message: deleting that message
		// releases it; by two: it stays; unsent or unknown: nothing.
		reserve(t, s, server.MediaUpload{MediaID: "media/dee/one", Owner: "dee", Size: 40, CreatedAt: t0.Add(2 * time.Hour)})
		reserve(t, s, server.MediaUpload{MediaID: "media/dee/two", Owner: "dee", Size: 2, CreatedAt: t0})
		reserve(t, s, server.MediaUpload{MediaID: "media/dee/unsent", Owner: "dee", Size: 1, CreatedAt: t0})
		linkMedia(t, s, "media/dee/one", "g:dee", "m1")
		linkMedia(t, s, "media/dee/one", "g:dee", "m1") // a resend: still one carrier
		linkMedia(t, s, "media/dee/two", "g:dee", "m2")
		linkMedia(t, s, "media/dee/two", "dm:dee:eve", "m3")
		for _, c := range []struct{ media, conv, msg string }{
			{"media/dee/one", "g:dee", "m9"},      // not its carrier
			{"media/dee/one", "dm:dee:eve", "m1"}, // nor is this
			{"media/dee/two", "g:dee", "m2"},      // shared with m3
			{"media/dee/unsent", "g:dee", "m4"},   // never sent
		} {
			if _, err := s.ReleaseMedia(ctx, c.media, c.conv, c.msg); !errors.Is(err, server.ErrNotApplied) {
				t.Fatalf("ReleaseMedia(%s, %s/%s) = %v, want ErrNotApplied", c.media, c.conv, c.msg, err)
			}
		}
		if _, err := s.ReleaseMedia(ctx, "media/dee/none", "g:dee", "m1"); !errors.Is(err, server.ErrNotFound) {
			t.Fatalf("ReleaseMedia of an unknown upload = %v, want ErrNotFound", err)
		}
		up, err := s.ReleaseMedia(ctx, "media/dee/one", "g:dee", "m1")
		must(t, err)
		if up.MediaID != "media/dee/one" || up.Owner != "dee" || up.Size != 40 {
			t.Fatalf("ReleaseMedia returned %+v", up)
		}
		if again, err := s.ReleaseMedia(ctx, "media/dee/one", "g:dee", "m1"); err != nil || again.Size != 40 {
			t.Fatalf("releasing again = %+v, %v; want the upload", again, err)
		}
		// Released: no send carries it any more, the sweep sees it (to finish
		// a release cut short), and DropMedia gives the bytes back.
		if _, err := s.LinkMedia(ctx, "media/dee/one", "g:dee", "m5"); !errors.Is(err, server.ErrNotFound) {
			t.Fatalf("LinkMedia of a released upload = %v, want ErrNotFound", err)
		}
		if ups, _ := s.UnsentMedia(ctx, t0.Add(3*time.Hour), 100); !hasUpload(ups, "media/dee/one") {
			t.Fatalf("a released upload is not in the sweep's view: %+v", ups)
		}
		must(t, s.DropMedia(ctx, up))
		if u, _ := s.MediaUsage(ctx, "dee"); u.Bytes != 3 || u.Uploads != 2 {
			t.Fatalf("usage after the release %+v, want 3 bytes in 2 uploads", u)
		}
		// Carried by two messages, it goes with the second: the carriers are
		// counted (as a set: m2's resend above was one carrier).
		linkMedia(t, s, "media/dee/two", "g:dee", "m2")
		if _, err := s.ReleaseMedia(ctx, "media/dee/two", "g:dee", "m2"); !errors.Is(err, server.ErrNotApplied) {
			t.Fatalf("ReleaseMedia of one of two carriers = %v, want ErrNotApplied", err)
		}
		two, err := s.ReleaseMedia(ctx, "media/dee/two", "dm:dee:eve", "m3")
		if err != nil || two.Size != 2 {
			t.Fatalf("ReleaseMedia of its last carrier = %+v, %v; want the upload", two, err)
		}
		must(t, s.DropMedia(ctx, two))
		if u, _ := s.MediaUsage(ctx, "dee"); u.Bytes != 1 || u.Uploads != 1 {
			t.Fatalf("usage after both carriers were deleted %+v, want 1 byte in 1 upload", u)
		}
	})
	t.Run("Unlink", func(t *testing.T) {
		// A send not stored takes its carrier back: the upload is unsent
		// again from then, for the resend or the sweep; unless another
		// message carries it, or it was linked again since.
		reserve(t, s, server.MediaUpload{MediaID: "media/fay/one", Owner: "fay", Size: 5, CreatedAt: t0})
		reserve(t, s, server.MediaUpload{MediaID: "media/fay/two", Owner: "fay", Size: 5, CreatedAt: t0})
		n := linkMedia(t, s, "media/fay/one", "g:fay", "m1")
		at := t0.Add(5 * time.Hour)
		must(t, s.UnlinkMedia(ctx, "media/fay/one", "g:fay", "m1", n, at))
		ups, _ := s.UnsentMedia(ctx, at.Add(time.Second), 100)
		if !hasUpload(ups, "media/fay/one") {
			t.Fatalf("an unlinked upload is not unsent again: %+v", ups)
		}
		if ups, _ := s.UnsentMedia(ctx, at, 100); hasUpload(ups, "media/fay/one") {
			t.Fatalf("an unlinked upload kept its first time (the sweep would take it before the resend): %+v", ups)
		}
		if _, err := s.ReleaseMedia(ctx, "media/fay/one", "g:fay", "m1"); !errors.Is(err, server.ErrNotApplied) {
			t.Fatalf("ReleaseMedia of an unlinked upload = %v, want ErrNotApplied", err)
		}
		// Its resend links it again; a stale unlink changes nothing.
		again := linkMedia(t, s, "media/fay/one", "g:fay", "m1")
		if err := s.UnlinkMedia(ctx, "media/fay/one", "g:fay", "m1", n, at); !errors.Is(err, server.ErrNotApplied) {
			t.Fatalf("an unlink older than the last link = %v, want ErrNotApplied", err)
		}
		if ups, _ := s.UnsentMedia(ctx, at.Add(time.Hour), 100); hasUpload(ups, "media/fay/one") {
			t.Fatal("a stale unlink put a linked upload back in the sweep's view")
		}
		if up, err := s.ReleaseMedia(ctx, "media/fay/one", "g:fay", "m1"); err != nil || up.Size != 5 {
			t.Fatalf("ReleaseMedia after the resend's link (%d) = %+v, %v; want the upload", again, up, err)
		}
		// Another message carries it: the unlink takes only its own carrier.
		linkMedia(t, s, "media/fay/two", "g:fay", "m2")
		n = linkMedia(t, s, "media/fay/two", "g:fay", "m3")
		must(t, s.UnlinkMedia(ctx, "media/fay/two", "g:fay", "m3", n, at))
		if ups, _ := s.UnsentMedia(ctx, at.Add(time.Hour), 100); hasUpload(ups, "media/fay/two") {
			t.Fatal("an upload another message carries is unsent after a failed send's unlink")
		}
		if up, err := s.ReleaseMedia(ctx, "media/fay/two", "g:fay", "m2"); err != nil || up.Size != 5 {
			t.Fatalf("ReleaseMedia of its only stored carrier = %+v, %v; want the upload", up, err)
		}
	})
}

// linkMedia links an upload and returns its link count.
func linkMedia(t *testing.T, s server.Store, mediaID, convID, messageID string) int64 {
	t.Helper()
	n, err := s.LinkMedia(context.Background(), mediaID, convID, messageID)
	must(t, err)
	return n
}

func hasUpload(ups []server.MediaUpload, id string) bool {
	for _, up := range ups {
		if up.MediaID == id {
			return true
		}
	}
	return false
}

// One account per name key: at registration, on a rename, and for the
// keys of older accounts claimed afterwards.
func testNameKeys(t *testing.T, s server.Store) {
	ctx := context.Background()
	must(t, s.CreateUser(ctx, server.User{ID: "alice", DisplayName: "Alice", PasswordHash: []byte("h"), CreatedAt: t0, NameKeys: []string{"alice"}}, server.Claim{Now: t0}))
	must(t, s.CreateUser(ctx, server.User{ID: "bob", DisplayName: "Bob", PasswordHash: []byte("h"), CreatedAt: t0, NameKeys: []string{"bob"}}, server.Claim{Now: t0}))
	t.Run("ErrConfusableAtRegistration", func(t *testing.T) {
		err := s.CreateUser(ctx, server.User{ID: "mallory", DisplayName: "alice", PasswordHash: []byte("h"), CreatedAt: t0, NameKeys: []string{"mallory", "alice"}}, server.Claim{Now: t0})
		if !errors.Is(err, server.ErrConfusable) {
			t.Fatalf("registering with alice's key = %v, want ErrConfusable", err)
		}
		if _, err := s.GetUser(ctx, "mallory"); !errors.Is(err, server.ErrNotFound) {
			t.Fatalf("the refused account was stored: %v", err)
		}
		// Its keys were not kept either: another account may take them.
		must(t, s.CreateUser(ctx, server.User{ID: "mallory", DisplayName: "Mal", PasswordHash: []byte("h"), CreatedAt: t0, NameKeys: []string{"mallory", "mal"}}, server.Claim{Now: t0}))
	})
	t.Run("ErrConfusableOnRename", func(t *testing.T) {
		name := "Alice"
		_, err := s.UpdateProfile(ctx, "mallory", server.ProfileChange{DisplayName: &name, NameKeys: []string{"mallory", "alice"}})
		if !errors.Is(err, server.ErrConfusable) {
			t.Fatalf("renaming to alice's key = %v, want ErrConfusable", err)
		}
		if u, _ := s.GetUser(ctx, "mallory"); u.DisplayName != "Mal" {
			t.Fatalf("the refused rename changed the name to %q", u.DisplayName)
		}
	})
	t.Run("RenameFreesTheOldKey", func(t *testing.T) {
		name := "Robert"
		u, err := s.UpdateProfile(ctx, "bob", server.ProfileChange{DisplayName: &name, NameKeys: []string{"bob", "robert"}})
		must(t, err)
		if u.DisplayName != "Robert" {
			t.Fatalf("renamed to %q", u.DisplayName)
		}
		name = "Mally"
		_, err = s.UpdateProfile(ctx, "mallory", server.ProfileChange{DisplayName: &name, NameKeys: []string{"mallory", "mally"}})
		must(t, err)
		// "mal" is free again: alice may take it.
		name = "Mal"
		_, err = s.UpdateProfile(ctx, "alice", server.ProfileChange{DisplayName: &name, NameKeys: []string{"alice", "mal"}})
		must(t, err)
		// Renaming back to one's own key is no conflict.
		name = "Alice"
		_, err = s.UpdateProfile(ctx, "alice", server.ProfileChange{DisplayName: &name, NameKeys: []string{"alice"}})
		must(t, err)
	})
	t.Run("Claim", func(t *testing.T) {
		must(t, s.CreateUser(ctx, server.User{ID: "old", DisplayName: "Old", PasswordHash: []byte("h"), CreatedAt: t0}, server.Claim{Now: t0}))
		if err := s.ClaimNameKeys(ctx, "old", []string{"old", "alice"}); !errors.Is(err, server.ErrConfusable) {
			t.Fatalf("claiming alice's key = %v, want ErrConfusable", err)
		}
		must(t, s.ClaimNameKeys(ctx, "old", []string{"old"})) // held already: no error
		err := s.CreateUser(ctx, server.User{ID: "old2", DisplayName: "old", PasswordHash: []byte("h"), CreatedAt: t0, NameKeys: []string{"old2", "old"}}, server.Claim{Now: t0})
		if !errors.Is(err, server.ErrConfusable) {
			t.Fatalf("the claimed key was taken: %v", err)
		}
		users, err := s.ListUsers(ctx)
		must(t, err)
		if len(users) != 4 {
			t.Fatalf("ListUsers lists %d accounts, want 4 (no key records)", len(users))
		}
	})
}
