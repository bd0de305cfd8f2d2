// Package client is what the chat TUI and the chat CLI share: configuration and
// stored logins (Config, Account), a typed HTTP API client (API), and a
// real-time session over WebSocket (Session) that keeps the account's cache
// (package localstore) in step with the server: it syncs on every connect,
// resends the outbox with the original message ids, stores every incoming
// message before acking it, applies status frames, reconnects with backoff
// (full jitter), and reports what happened as Events.
//
// A UI typically does:
//
//	sess, err := client.Open(ctx, cfg)        // ErrNotLoggedIn: show a login screen, then
//	                                          //   client.Login(ctx, cfg, server, user, pw) and Open again
//	defer sess.Close()
//	inbox, _ := sess.Inbox(ctx, 50)           // paint from cache at once
//	go sess.Run(ctx)                          // connect, sync, reconnect until ctx ends
//	for ev := range sess.Events() { ... }     // MessageEvent (MessagesEvent with MessageBatches), SentEvent, StatusEvent, StateEvent, StreamPausedEvent (with StreamPauses)...
//	m, _ := sess.Enqueue(ctx, convID, "hi")   // durable in the outbox at once; SentEvent follows
//	sess.MarkRead(ctx, convID, seq)           // the user saw it
//	page, _ := sess.History(ctx, convID, before, 50) // cache first, then the server
//
// Scripts that want one blocking, fast send use API.SendMessage (HTTP) with
// their own message id instead; chat send does.
package client
