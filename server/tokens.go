package server

import (
	"sync/atomic"
	"time"
)

// maxTokens bounds the token cache: one entry per token used within its TTL
// on this node, which is about one per connected or active client.
const maxTokens = 100_000

// tokenCache keeps the tokens this node checked for a few seconds, so a
// request does not read its token from the store (a strongly consistent read
// on DynamoDB: 1 RCU, and a failure while the store is down). It is only
// used while the node hears every revocation (Revocations.Hearing): a
// revoked token is refused on every node as soon as it hears the revocation
// (milliseconds after it is published), not a TTL later; and when the node cannot hear them, it reads
// every token from the store again.
type tokenCache struct {
	ttl  time.Duration
	rev  Revocations
	g    *generations[tokenEntry]
	seen atomic.Uint64 // revocations heard; a read that raced one is not cached
}

type tokenEntry struct {
	userID  string
	expires time.Time // the token's own expiry
	at      time.Time // when it was read from the store
	epoch   uint64    // Revocations.Hearing's epoch then
}

func newTokenCache(ttl time.Duration, rev Revocations) *tokenCache {
	return &tokenCache{ttl: ttl, rev: rev, g: newGenerations[tokenEntry](maxTokens)}
}

// get returns the user of a cached token that is still good to answer from.
func (c *tokenCache) get(hash string, now time.Time) (string, bool) {
	epoch, ok := c.rev.Hearing()
	if !ok {
		return "", false
	}
	e, ok := c.g.load(hash)
	if !ok || e.epoch != epoch || now.Sub(e.at) > c.ttl || !now.Before(e.expires) {
		return "", false
	}
	return e.userID, true
}

// getStale is get without the TTL: what a token was when this node last read
// it, for answering while the store cannot be read (an outage). Stale here is
// safe as long as the node hears every revocation, which the epoch checks: a
// logout, a disable or a reset publishes one, and none can take effect in the
// store during the outage anyway (each is a write there first). The token's
// own expiry still holds.
func (c *tokenCache) getStale(hash string, now time.Time) (string, bool) {
	epoch, ok := c.rev.Hearing()
	if !ok {
		return "", false
	}
	e, ok := c.g.load(hash)
	if !ok || e.epoch != epoch || !now.Before(e.expires) {
		return "", false
	}
	return e.userID, true
}

// mark is taken before a token is read from the store and handed to put:
// a revocation heard, or a break in hearing them, between the two means the
// read may be stale, and it is not cached.
type tokenMark struct {
	seen, epoch uint64
	ok          bool
}

func (c *tokenCache) mark() tokenMark {
	epoch, ok := c.rev.Hearing()
	return tokenMark{seen: c.seen.Load(), epoch: epoch, ok: ok}
}

func (c *tokenCache) put(m tokenMark, hash string, t Token, now time.Time) {
	if !m.ok || c.seen.Load() != m.seen {
		return
	}
	if epoch, ok := c.rev.Hearing(); !ok || epoch != m.epoch {
		return
	}
	c.g.store(hash, tokenEntry{userID: t.UserID, expires: t.ExpiresAt, at: now, epoch: m.epoch})
	// A revocation heard while storing: revoke counts before it deletes, so
	// either it deletes this entry or this sees its count and does.
	if c.seen.Load() != m.seen {
		c.g.delete(hash)
	}
}

// revoke is the Revocations handler. A user's revocation drops the whole
// cache: it is rare (an admin's act), and the cache is keyed by token.
func (c *tokenCache) revoke(r Revocation) {
	c.seen.Add(1)
	for _, h := range r.TokenHashes {
		c.g.delete(h)
	}
	if len(r.UserIDs) > 0 {
		c.g.clear()
	}
}
