// Package client is what the chat TUI and the chat CLI share: configuration and
// stored logins (Config, Account), a typed HTTP API client (API), and a
// real-time session over WebSocket (Session) that keeps the account's cache
// (package localstore) in step with the server: it syncs on every connect,
// resends the outbox, stores every incoming message before acking it, applies
// status frames, reconnects with backoff, and reports what happened as Events.
//
// A UI typically does:
//
//	acct, err := cfg.LoadAccount()             // ErrNotLoggedIn: ask for a login
//	c, err := client.Open(ctx, cfg)            // API + cache + session, not yet connected
//	defer c.Close()
//	inbox, _ := c.Store().Inbox(ctx, 50)       // paint from cache at once
//	go c.Run(ctx)                              // connect, sync, reconnect until ctx ends
//	for ev := range c.Events() { ... }         // MessageEvent, SentEvent, StatusEvent, StateEvent...
//	c.Send(ctx, convID, "hi")                  // outbox first, then the socket; resolves on "sent"
//	c.MarkRead(ctx, convID, seq)               // on screen: read
//	page, _ := c.History(ctx, convID, before, 50)
package client
