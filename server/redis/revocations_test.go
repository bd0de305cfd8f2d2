package redis_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/redis"
	"github.com/chatterm/chat/wire"
)

// A token one node answers from its cache is refused there as soon as
// another node revokes it: logout, or an admin ending the sessions.
func TestRevocationReachesEveryNode(t *testing.T) {
	c := twoNodes(t)
	// alice's token on node-b: read from the store once, then cached there.
	aliceOnB := &api{t: t, base: c.b.URL, token: c.alice.token}
	for range 2 {
		if st := aliceOnB.do("GET", "/v1/me", nil, nil); st != http.StatusOK {
			t.Fatalf("GET /v1/me on node-b: %d", st)
		}
	}
	if st := c.alice.do("POST", "/v1/logout", nil, nil); st/100 != 2 {
		t.Fatalf("logout on node-a: %d", st)
	}
	// PUBLISH returns once Redis has queued the message for node-b, not once
	// node-b has read it: the revocation arrives there within milliseconds.
	waitFor(t, time.Second, "node-b to refuse alice's token after logout on node-a", func() bool {
		return aliceOnB.do("GET", "/v1/me", nil, nil) == http.StatusUnauthorized
	})

	// bob's token cached on node-a; alice (admin) ends his sessions on node-b.
	var auth wire.AuthResponse
	if st := c.alice.do("POST", "/v1/login", wire.LoginRequest{UserID: "alice", Password: "password-alice"}, &auth); st/100 != 2 {
		t.Fatalf("login: %d", st)
	}
	adminOnB := &api{t: t, base: c.b.URL, token: auth.Token}
	bobOnA := &api{t: t, base: c.a.URL, token: c.bob.token}
	if st := bobOnA.do("GET", "/v1/me", nil, nil); st != http.StatusOK {
		t.Fatalf("GET /v1/me on node-a: %d", st)
	}
	if st := adminOnB.do("DELETE", "/v1/admin/users/bob/sessions", nil, nil); st/100 != 2 {
		t.Fatalf("end bob's sessions on node-b: %d", st)
	}
	waitFor(t, time.Second, "node-a to refuse bob's token after his sessions ended on node-b", func() bool {
		return bobOnA.do("GET", "/v1/me", nil, nil) == http.StatusUnauthorized
	})
}

// A node hears revocations while its subscription answers; when Redis goes
// away it stops hearing them within a second (its token cache is off), and
// when Redis is back it hears them again in a new epoch (the cache starts
// empty: what was published meanwhile is lost).
func TestRevocationsHearing(t *testing.T) {
	r := startOwnRedis(t)
	o := redis.Options{Addrs: []string{r.addr()}, Prefix: prefix(t), Breaker: redis.BreakerOptions{OpenFor: 100 * time.Millisecond}}
	c := client(t, o)
	rev := c.Revocations()
	got := make(chan server.Revocation, 16)
	if err := rev.Subscribe(t.Context(), func(v server.Revocation) { got <- v }); err != nil {
		t.Fatal(err)
	}
	epoch, ok := rev.Hearing()
	if !ok {
		t.Fatal("not hearing revocations with the subscription live")
	}
	other := client(t, redis.Options{Addrs: o.Addrs, Prefix: o.Prefix}).Revocations()
	if err := other.Publish(t.Context(), server.Revocation{TokenHashes: []string{"h1"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case v := <-got:
		if len(v.TokenHashes) != 1 || v.TokenHashes[0] != "h1" {
			t.Errorf("heard %+v", v)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("a revocation published by another client was not heard")
	}

	r.stop()
	waitFor(t, 3*time.Second, "hearing to stop with Redis down", func() bool { _, ok := rev.Hearing(); return !ok })
	r.start()
	waitFor(t, 10*time.Second, "hearing again with Redis back", func() bool { _, ok := rev.Hearing(); return ok })
	if e, _ := rev.Hearing(); e == epoch {
		t.Errorf("same epoch %d after the subscription was made again: entries cached before the break would be used", e)
	}
}

func waitFor(t *testing.T, d time.Duration, what string, f func() bool) {
	t.Helper()
	for end := time.Now().Add(d); !f(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("waited %v for %s", d, what)
		}
	}
}
