package server

import (
	"strconv"
	"sync/atomic"
	"testing"
)

func (g *generations[V]) size() int64 { return g.cur.Load().n.Load() + g.prev.Load().n.Load() }

// A node that serves ever more conversations keeps a bounded number of cache
// entries, and the ones in use stay.
func TestCachesBounded(t *testing.T) {
	const limit = 1000
	c := lastSeqCache{g: newGenerations[*atomic.Int64](limit)}
	c.raise("hot", 7)
	for i := range 50 * limit {
		c.raise("conv"+strconv.Itoa(i), int64(i))
		if i%100 == 0 {
			c.raise("hot", int64(7+i/100)) // used now and then, as an active chat is
		}
		if n := c.g.size(); n > limit {
			t.Fatalf("after %d conversations the cache holds %d entries, over its bound %d", i+1, n, limit)
		}
	}
	if got, want := c.get("hot"), int64(7+(50*limit-1)/100); got != want {
		t.Fatalf("the conversation in use: last_seq %d, want %d (kept across generations)", got, want)
	}
	if c.known("conv0") {
		t.Fatal("the first conversation, unused since, is still cached")
	}
	if got := c.get("conv" + strconv.Itoa(50*limit-1)); got != 50*limit-1 {
		t.Fatalf("the newest entry: %d", got)
	}
}
