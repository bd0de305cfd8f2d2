package client_test

import (
	"testing"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

func TestPresenceWords(t *testing.T) {
	now := time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC) // a Wednesday
	for want, p := range map[string]wire.MemberPresence{
		"online":               {Online: true},
		"":                     {Hidden: true, Online: true},
		"last seen just now":   {LastSeen: now.Add(-20 * time.Second)},
		"last seen 09:30":      {LastSeen: time.Date(2026, 11, 25, 9, 30, 0, 0, time.UTC)},
		"last seen mon 18:05":  {LastSeen: time.Date(2026, 11, 23, 18, 5, 0, 0, time.UTC)},
		"last seen 2026-11-03": {LastSeen: time.Date(2026, 11, 3, 8, 0, 0, 0, time.UTC)},
		"last seen 2026-11-19": {LastSeen: time.Date(2026, 11, 19, 8, 0, 0, 0, time.UTC)},
	} {
		if got := client.PresenceWords(p, now); got != want {
			t.Errorf("PresenceWords(%+v) = %q, want %q", p, got, want)
		}
	}
	if got := client.PresenceWords(wire.MemberPresence{}, now); got != "" {
		t.Errorf("never seen: %q, want nothing", got)
	}
}
