package dynamo_test

import (
	"context"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/dynamo"
	"github.com/chatterm/chat/server/inmem"
	"github.com/chatterm/chat/wire"
)

// TestTokenCost measures what authenticating 10 requests with one token
// reads from DynamoDB, with the per-node token cache off and on
// (docs/dynamodb.md, "What a request's token costs").
func TestTokenCost(t *testing.T) {
	for _, c := range []struct {
		name string
		ttl  time.Duration
		max  float64
	}{{"cache off", -1, 10}, {"cache on", 5 * time.Second, 1}} {
		t.Run(c.name, func(t *testing.T) {
			meter := dynamo.NewMeter()
			s := open(t, dynamo.Options{Meter: meter})
			ctx := context.Background()
			svc, err := server.New(server.Config{Backends: server.Backends{Store: s, Sequencer: inmem.NewSequencer(), Rate: inmem.NewRateLimiter(time.Now),
				Inbox: inmem.NewInboxIndex(100), Profiles: inmem.NewProfileCache(time.Hour, time.Minute, time.Now),
				Registry: inmem.NewRegistry(), Broker: inmem.NewBroker(), Revocations: inmem.NewRevocations()},
				PasswordCost: 4, TokenCacheTTL: c.ttl})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { svc.Shutdown(context.Background()) })
			auth, err := svc.Register(ctx, wire.RegisterRequest{UserID: "ann", Password: "password-ann"}, "")
			if err != nil {
				t.Fatal(err)
			}
			meter.Reset()
			for range 10 {
				if _, err := svc.Authenticate(ctx, auth.Token); err != nil {
					t.Fatal(err)
				}
			}
			rcu := meter.ReadUnits()
			t.Logf("10 requests with one token, %s: %g RCU (%s)", c.name, rcu, meter)
			if rcu > c.max {
				t.Errorf("%g RCU for 10 requests, want at most %g", rcu, c.max)
			}
		})
	}
}
