package main

import (
	"context"

	"github.com/chatterm/chat/client"
)

// A profile frame is best effort: one sent while tail was reconnecting is
// lost, and the name it carried stayed old for the rest of the run. A
// reconnect asks the known names again, as the TUI does
// (tui/names_refresh.go; docs/protocol.md, "profile").

// noteReconnect tells t.reconnected when status is the connection back
// after it was lost (not the first connect: nothing was missed before it),
// once the lines that came before are printed with the names they had.
func (t *tailer) noteReconnect(ctx context.Context, status client.ConnStatus) error {
	back := status == client.Connected && (t.status == client.Reconnecting || t.status == client.Offline)
	t.status = status
	if !back || t.reconnected == nil {
		return nil
	}
	if err := t.printPending(ctx); err != nil {
		return err
	}
	t.reconnected()
	return nil
}

// askAgain makes every name known so far be asked again the next time it
// is shown, and the server be asked again after it was unreachable. Lazily:
// a line waits for its sender's answer (nameWait at most), and only the
// people who write after the reconnect cost a request, where asking all at
// once would cost one per person ever shown, for every tail reconnecting
// after a server restart. Until its answer a name stays as it was; a
// failed answer keeps it.
func (c *nameCache) askAgain() {
	if c.stale == nil {
		c.stale = map[string]bool{}
	}
	for id := range c.known {
		c.stale[id] = true
	}
	c.unreachable = false
}
