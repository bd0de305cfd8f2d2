package dynamo_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/dynamo"
)

// putTokens gives each of users n tokens.
func putTokens(t *testing.T, s *dynamo.Store, users []string, n int) {
	t.Helper()
	ctx := context.Background()
	for _, u := range users {
		for i := range n {
			tok := server.Token{Hash: fmt.Sprintf("%s-token-%d", u, i), UserID: u, ExpiresAt: time.Now().Add(time.Hour)}
			if err := s.PutToken(ctx, tok); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestUserTokensCost: disabling an account and deleting its tokens read the
// user's tokens from the index by user, so what they read follows the
// user's tokens, not the table's: no Scan, and the same read units whether
// the table holds 3 tokens or 150 (docs/dynamodb.md, "A user's tokens").
func TestUserTokensCost(t *testing.T) {
	ctx := context.Background()
	meter := dynamo.NewMeter()
	s := open(t, dynamo.Options{Meter: meter})
	putTokens(t, s, []string{"bob"}, 3)

	cost := func(op func() error) (read float64, scans int) {
		t.Helper()
		meter.Reset()
		if err := op(); err != nil {
			t.Fatal(err)
		}
		return meter.ReadUnits(), meter.Ops()["Scan"].Calls
	}
	alone, scans := cost(func() error { return s.DisableUserTokens(ctx, "bob") })
	if scans != 0 {
		t.Fatalf("DisableUserTokens made %d Scans; want a Query on the index by user", scans)
	}
	var others []string
	for i := range 50 {
		others = append(others, fmt.Sprintf("user%02d", i))
	}
	putTokens(t, s, others, 3)
	among, scans := cost(func() error { return s.DisableUserTokens(ctx, "bob") })
	t.Logf("DisableUserTokens of 3 tokens: %g RCU alone, %g RCU among 150 others' (%s)", alone, among, meter)
	if scans != 0 || among != alone {
		t.Fatalf("among 150 other tokens: %g RCU and %d Scans, alone %g: the read grows with other users' tokens", among, scans, alone)
	}
	for i := range 3 {
		tok, err := s.GetToken(ctx, fmt.Sprintf("bob-token-%d", i))
		if err != nil || !tok.Disabled {
			t.Fatalf("bob's token %d after DisableUserTokens: %+v, %v; want it disabled", i, tok, err)
		}
	}
	if tok, err := s.GetToken(ctx, "user00-token-0"); err != nil || tok.Disabled {
		t.Fatalf("another user's token: %+v, %v; want it untouched", tok, err)
	}

	deleted, scans := cost(func() error { return s.DeleteUserTokens(ctx, "bob") })
	t.Logf("DeleteUserTokens of 3 tokens among 150: %g RCU", deleted)
	if scans != 0 || deleted > alone {
		t.Fatalf("DeleteUserTokens: %g RCU and %d Scans; want the index's read (%g RCU)", deleted, scans, alone)
	}
	if _, err := s.GetToken(ctx, "bob-token-0"); err != server.ErrNotFound {
		t.Fatalf("bob's token after DeleteUserTokens: %v; want not found", err)
	}
}

// Tables made before the index by user: disabling an account still finds
// the user's tokens (by the Scan it used before the index), and
// --create-tables adds the index, which then finds the tokens made before it.
func TestTokensIndexAddedToOlderTables(t *testing.T) {
	ctx := context.Background()
	meter := dynamo.NewMeter()
	s := open(t, dynamo.Options{Meter: meter})
	putTokens(t, s, []string{"bob"}, 2)
	if err := s.DropTokensIndex(ctx); err != nil {
		t.Fatal(err)
	}
	meter.Reset()
	if err := s.DisableUserTokens(ctx, "bob"); err != nil {
		t.Fatalf("DisableUserTokens without the index: %v; want the tokens found by a scan", err)
	}
	if scans := meter.Ops()["Scan"].Calls; scans != 1 {
		t.Fatalf("without the index, %d Scans (%s); want the one that finds the tokens", scans, meter)
	}
	for i := range 2 {
		if tok, err := s.GetToken(ctx, fmt.Sprintf("bob-token-%d", i)); err != nil || !tok.Disabled {
			t.Fatalf("bob's token %d, disabled without the index: %+v, %v; want it disabled", i, tok, err)
		}
	}
	if err := s.DeleteUserTokens(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	putTokens(t, s, []string{"bob"}, 2)
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := s.CreateTables(cctx); err != nil {
		t.Fatal(err)
	}
	meter.Reset()
	if err := s.DisableUserTokens(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	if scans := meter.Ops()["Scan"].Calls; scans != 0 {
		t.Fatalf("after --create-tables, %d Scans; want the index's Query", scans)
	}
	for i := range 2 {
		if tok, err := s.GetToken(ctx, fmt.Sprintf("bob-token-%d", i)); err != nil || !tok.Disabled {
			t.Fatalf("bob's token %d, made before the index: %+v, %v; want it disabled", i, tok, err)
		}
	}
}
