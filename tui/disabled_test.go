package tui

import (
	"testing"

	"github.com/chatterm/chat/client"
)

// A disabled account is told so on the login screen, not asked to log in
// again as after a revoked token (its login would be refused the same way).
func TestDisabledAccountSaysSo(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	h.key("enter")
	h.send(client.StateEvent{State: client.State{Status: client.Offline, LoggedOut: true, Disabled: true}})
	if h.root().page != pageLogin {
		t.Fatal("a disabled account's refusal did not bring up the login screen")
	}
	h.wantScreen("account disabled: ask your server's admin")
}
