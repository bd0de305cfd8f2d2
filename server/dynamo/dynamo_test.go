package dynamo_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/dynamo"
	"github.com/chatterm/chat/server/storetest"
)

// endpoint is the DynamoDB API the tests use (moto; scripts/services.sh starts
// it).
func endpoint(t testing.TB) string {
	t.Helper()
	return testenv.DynamoEndpoint(t)
}

func prefix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "t" + hex.EncodeToString(b[:]) + "-"
}

// open returns a Store on fresh tables of its own, dropped after the test.
func open(t testing.TB, o dynamo.Options) *dynamo.Store {
	t.Helper()
	if o.Endpoint == "" {
		o.Endpoint = endpoint(t)
		// moto is slow, and slower on a loaded machine: behaviour tests get time;
		// the fault tests (own endpoint) keep the fail-fast defaults.
		if o.CallTimeout == 0 {
			o.CallTimeout = 30 * time.Second
		}
	}
	o.TablePrefix = prefix()
	// A region of its own: moto keeps each region's tables apart, and restores
	// all of a region's tables when a transaction fails (see SerialWrites).
	// scripts/services.sh starts moto with MOTO_ALLOW_NONEXISTENT_REGION=true.
	o.Region, o.AccessKeyID, o.SecretAccessKey = "t"+prefix()[1:9], "test", "test"
	o.SkipResponseChecksum, o.SerialWrites = true, true
	s, err := dynamo.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.CreateTables(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.DeleteTables(context.Background()); err != nil {
			t.Logf("dropping tables: %v", err)
		}
		s.Close()
	})
	return s
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) server.Store { return open(t, dynamo.Options{}) },
		storetest.Options{Concurrency: 4, PerWorker: 10})
}
