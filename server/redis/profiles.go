package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/chatterm/chat/server"
)

var _ server.ProfileCache = (*ProfileCache)(nil)

// ProfileCache is SET profile:{user} with a TTL of ProfileTTL plus a random
// jitter up to ProfileJitter, DEL on update.
type ProfileCache struct{ c *Client }

// ProfileCache returns the profile cache.
func (c *Client) ProfileCache() *ProfileCache { return &ProfileCache{c} }

// cachedProfile is the stored form; short names keep a million cached profiles small.
type cachedProfile struct {
	Name   string `json:"n,omitempty"`
	Status string `json:"s,omitempty"`
	Admin  bool   `json:"a,omitempty"`
	Hide   bool   `json:"h,omitempty"` // HidePresence
}

func (pc *ProfileCache) Get(ctx context.Context, userID string) (server.Profile, bool, error) {
	var b []byte
	// From a replica when replica reads are on: a profile changed a moment
	// ago may read as it was (Delete is on the primary) for the replica's lag.
	err := pc.c.read(ctx, "profile get", func(ctx context.Context, r goredis.Cmdable) (err error) {
		b, err = r.Get(ctx, pc.c.key("profile", userID)).Bytes()
		return err
	})
	if errors.Is(err, goredis.Nil) {
		return server.Profile{}, false, nil
	}
	if err != nil {
		return server.Profile{}, false, err
	}
	var cp cachedProfile
	if err := json.Unmarshal(b, &cp); err != nil {
		// A corrupt entry is a miss: the caller loads and overwrites it.
		return server.Profile{}, false, nil
	}
	return server.Profile{UserID: userID, DisplayName: cp.Name, Status: cp.Status, Admin: cp.Admin, HidePresence: cp.Hide}, true, nil
}

func (pc *ProfileCache) Set(ctx context.Context, p server.Profile) error {
	if p.UserID == "" {
		return errEmpty
	}
	b, err := json.Marshal(cachedProfile{Name: p.DisplayName, Status: p.Status, Admin: p.Admin, Hide: p.HidePresence})
	if err != nil {
		return fmt.Errorf("redis profile set: %w", err)
	}
	ttl := pc.c.o.ProfileTTL + time.Duration(rand.Int64N(int64(pc.c.o.ProfileJitter)+1))
	return pc.c.do(ctx, "profile set", func(ctx context.Context) error {
		return pc.c.rdb.Set(ctx, pc.c.key("profile", p.UserID), b, ttl).Err()
	})
}

func (pc *ProfileCache) Delete(ctx context.Context, userID string) error {
	return pc.c.do(ctx, "profile delete", func(ctx context.Context) error {
		return pc.c.rdb.Del(ctx, pc.c.key("profile", userID)).Err()
	})
}
