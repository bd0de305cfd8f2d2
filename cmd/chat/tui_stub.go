package main

import (
	"context"
	"errors"

	"github.com/chatterm/chat/client"
)

// runTUI is a placeholder until the TUI lands in tui.go (which replaces this
// file). cfg carries --server, --home and CHAT_* already applied.
func runTUI(ctx context.Context, cfg client.Config) error {
	return errors.New("the TUI is not built yet")
}
