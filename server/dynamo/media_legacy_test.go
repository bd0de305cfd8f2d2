package dynamo_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/dynamo"
)

// Upload items written before the carriers set hold their first carrier in
// carrier and shared when another message sent them too. One with a single
// carrier is released by that message's delete, as before; one marked
// shared stays for good (its other carriers were never recorded), and a new
// carrier added to it changes nothing of that; a failed send's unlink on it
// leaves it sent.
func TestMediaItemsFromBeforeTheCarriersSet(t *testing.T) {
	ctx := context.Background()
	s := open(t, dynamo.Options{})
	for _, id := range []string{"media/ann/one", "media/ann/shared"} {
		was, err := s.MediaUsage(ctx, "ann")
		if err != nil {
			t.Fatal(err)
		}
		next := was
		next.Bytes += 10
		next.Uploads++
		next.Version++
		if err := s.ReserveMedia(ctx, server.MediaUpload{MediaID: id, Owner: "ann", Size: 10, CreatedAt: time.Unix(1, 0)}, was, next); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetLegacyCarrier(ctx, "media/ann/one", "g:x/m1", false); err != nil {
		t.Fatal(err)
	}
	if err := s.SetLegacyCarrier(ctx, "media/ann/shared", "g:x/m2", true); err != nil {
		t.Fatal(err)
	}
	n, err := s.LinkMedia(ctx, "media/ann/shared", "g:x", "m3")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.UnlinkMedia(ctx, "media/ann/shared", "g:x", "m3", n, time.Unix(50, 0)); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"m2", "m3"} {
		if _, err := s.ReleaseMedia(ctx, "media/ann/shared", "g:x", m); !errors.Is(err, server.ErrNotApplied) {
			t.Fatalf("releasing a shared upload from before the set (%s) = %v, want ErrNotApplied (kept)", m, err)
		}
	}
	if _, err := s.ReleaseMedia(ctx, "media/ann/one", "g:x", "m9"); !errors.Is(err, server.ErrNotApplied) {
		t.Fatalf("releasing an upload from before the set by another message = %v, want ErrNotApplied", err)
	}
	if up, err := s.ReleaseMedia(ctx, "media/ann/one", "g:x", "m1"); err != nil || up.Size != 10 {
		t.Fatalf("releasing an upload from before the set by its carrier = %+v, %v; want it released", up, err)
	}
	ups, err := s.UnsentMedia(ctx, time.Unix(100, 0), 10)
	if err != nil || len(ups) != 1 || ups[0].MediaID != "media/ann/one" {
		t.Fatalf("the sweep's view: %+v, %v; want only the released upload", ups, err)
	}
}
