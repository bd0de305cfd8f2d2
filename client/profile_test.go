package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

func (d *device) profileEvents() []wire.Profile {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []wire.Profile
	for _, ev := range d.events {
		if e, ok := ev.(client.ProfileEvent); ok {
			out = append(out, e.Profile)
		}
	}
	return out
}

// A new display name or status reaches, live, the open sessions of everyone
// who shares a conversation with its user, and the user's own; nobody else
// hears of it, and a change of the presence setting alone says nothing.
func TestProfileChangesReachWhoSharesAConversation(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, bobAPI, carolAPI := register(t, srv, "alice"), register(t, srv, "bob"), register(t, srv, "carol")
	direct(t, aliceAPI, "bob")
	alice := startDevice(t, aliceAPI, srv.URL, "alice")
	bob := startDevice(t, bobAPI, srv.URL, "bob")
	carol := startDevice(t, carolAPI, srv.URL, "carol")
	for _, d := range []*device{alice, bob, carol} {
		d.waitFor("connected", func() bool { return d.sess.State().Status == client.Connected })
	}
	ctx := context.Background()
	hide := true
	if _, err := aliceAPI.UpdateMe(ctx, wire.ProfileUpdate{HidePresence: &hide}); err != nil {
		t.Fatal(err)
	}
	name, status := "Alice Liddell", "down the rabbit hole"
	if _, err := aliceAPI.UpdateMe(ctx, wire.ProfileUpdate{DisplayName: &name, Status: &status}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []*device{bob, alice} {
		d.waitFor("alice's new profile", func() bool { return len(d.profileEvents()) > 0 })
		got := d.profileEvents()
		if len(got) != 1 || got[0].UserID != "alice" || got[0].DisplayName != name || got[0].Status != status || got[0].HidePresence {
			t.Errorf("profile events = %+v, want alice's new name and status alone", got)
		}
	}
	time.Sleep(300 * time.Millisecond) // a frame to carol would be there by now
	if got := carol.profileEvents(); len(got) != 0 {
		t.Errorf("carol shares no conversation with alice, yet heard %+v", got)
	}
}
