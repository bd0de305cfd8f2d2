package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/redis"
)

// TestInboxCopyExpiresWithTheInboxTTL: a copy lasts InboxTTL (the
// --inbox-ttl knob) from its last Save, as the inbox index does from its last
// read, and then answers nothing.
func TestInboxCopyExpiresWithTheInboxTTL(t *testing.T) {
	const ttl = 400 * time.Millisecond
	x := client(t, redis.Options{InboxTTL: ttl}).InboxCopies()
	ctx := context.Background()
	entries := []server.CopiedEntry{{ConvID: "dm:a:b", Data: []byte(`{}`)}}
	if err := x.Save(ctx, "a", entries, true); err != nil {
		t.Fatal(err)
	}
	if got, err := x.Load(ctx, "a"); err != nil || len(got) != 1 {
		t.Fatalf("Load after Save = %v, %v", got, err)
	}
	testenv.WaitFor(t, 10*time.Second, func() bool {
		got, err := x.Load(ctx, "a")
		return err == nil && len(got) == 0
	})
}
