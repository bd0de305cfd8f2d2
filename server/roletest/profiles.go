package roletest

import (
	"testing"

	"github.com/chatterm/chat/server"
)

// ProfileCache checks a server.ProfileCache. Expiry is the implementation's own
// test: it needs a clock the suite cannot move.
func ProfileCache(t *testing.T, newCache func(t *testing.T) server.ProfileCache) {
	t.Run("OK", func(t *testing.T) {
		pc, c := newCache(t), ctx(t)
		u := id(t, "u")
		if _, ok, err := pc.Get(c, u); err != nil || ok {
			t.Fatalf("Get before Set = %v, %v; want miss", ok, err)
		}
		p := server.Profile{UserID: u, DisplayName: "Ann Lee", Status: "on call ☎", Admin: true, HidePresence: true}
		if err := pc.Set(c, p); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := pc.Get(c, u); err != nil || !ok || got != p {
			t.Fatalf("Get = %+v, %v, %v; want %+v", got, ok, err, p)
		}
		p.Status, p.Admin = "", false
		if err := pc.Set(c, p); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := pc.Get(c, u); err != nil || !ok || got != p {
			t.Fatalf("Get after second Set = %+v, %v, %v; want %+v", got, ok, err, p)
		}
		if err := pc.Delete(c, u); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := pc.Get(c, u); err != nil || ok {
			t.Fatalf("Get after Delete = %v, %v; want miss", ok, err)
		}
		if err := pc.Delete(c, u); err != nil {
			t.Fatalf("Delete of an absent entry: %v", err)
		}
	})
	t.Run("ErrEmptyID", func(t *testing.T) {
		pc, c := newCache(t), ctx(t)
		if err := pc.Set(c, server.Profile{DisplayName: "x"}); err == nil {
			t.Error("Set without user id succeeded")
		}
	})
}
