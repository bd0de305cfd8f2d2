package dynamo_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
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
	if o.TablePrefix == "" { // else a second Store on another's tables
		o.TablePrefix = prefix()
		// A region of its own: moto keeps each region's tables apart, and restores
		// all of a region's tables when a transaction fails (see SerialWrites).
		// scripts/services.sh starts moto with MOTO_ALLOW_NONEXISTENT_REGION=true.
		o.Region = "t" + prefix()[1:9]
	}
	o.AccessKeyID, o.SecretAccessKey = "test", "test"
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

// Tables a newer build used (their #store item says a higher schema) are
// refused, by StoreID (which every node calls at start) and by a rotation.
func TestStoreIDRefusesANewerSchema(t *testing.T) {
	ctx := context.Background()
	s := open(t, dynamo.Options{})
	if _, err := s.StoreID(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.SetStoreSchema(ctx, dynamo.SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.StoreID(ctx); !errors.Is(err, server.ErrNewerSchema) || !strings.Contains(err.Error(), "dynamodb schema 3, this chatserver knows up to 2") {
		t.Fatalf("StoreID on tables of a newer schema: %v", err)
	}
	if _, err := s.RotateStoreID(ctx); !errors.Is(err, server.ErrNewerSchema) {
		t.Fatalf("RotateStoreID on tables of a newer schema: %v", err)
	}
}
