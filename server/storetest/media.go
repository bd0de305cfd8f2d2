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
		if err := s.LinkMedia(ctx, "media/ben/b2", "g:x"); !errors.Is(err, server.ErrNotFound) {
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
		must(t, s.LinkMedia(ctx, "media/cy/sent", "g:cy"))
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
		if err := s.LinkMedia(ctx, "media/cy/old", "g:cy"); !errors.Is(err, server.ErrNotFound) {
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
}

func hasUpload(ups []server.MediaUpload, id string) bool {
	for _, up := range ups {
		if up.MediaID == id {
			return true
		}
	}
	return false
}
