package dynamo_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/dynamo"
	"github.com/chatterm/chat/server/inmem"
	"github.com/chatterm/chat/server/s3"
	"github.com/chatterm/chat/wire"
)

// countedBlobs counts the cold tier's requests on a real S3 (moto).
type countedBlobs struct {
	server.BlobStore
	puts, gets, deletes atomic.Int64
}

func (c *countedBlobs) Put(ctx context.Context, key string, data []byte, contentType string) error {
	c.puts.Add(1)
	return c.BlobStore.Put(ctx, key, data, contentType)
}

func (c *countedBlobs) Get(ctx context.Context, key string) ([]byte, error) {
	c.gets.Add(1)
	return c.BlobStore.Get(ctx, key)
}

func (c *countedBlobs) Delete(ctx context.Context, key string) error {
	c.deletes.Add(1)
	return c.BlobStore.Delete(ctx, key)
}

// passCost is what one archiver pass cost.
type passCost struct {
	moved           int
	rcu, wcu        float64
	puts, deletes   int64
	calls           string
	messagesInTable int
}

func (p passCost) String() string {
	return fmt.Sprintf("%d rows archived: %g RCU, %g WCU, %d S3 PUTs, %d S3 DELETEs (%s)", p.moved, p.rcu, p.wcu, p.puts, p.deletes, p.calls)
}

// TestArchiveCost prices the incremental archiver (docs/dynamodb.md, "The
// archiver"): per archived row, and for a pass with little to do on a small
// table and on a larger one, beside the full Scan of the messages table the
// archiver made before. The assertion is the point of the design: a pass
// costs what it archives, the same on a table twice the size.
func TestArchiveCost(t *testing.T) {
	// Two nodes on the same tables: one sends (its delivery worker and
	// follow-up writes would land in the figures), the other archives,
	// through a store of its own with the Meter.
	meter := dynamo.NewMeter()
	tables, region := prefix(), "t"+prefix()[1:9]
	sender := open(t, dynamo.Options{TablePrefix: tables, Region: region})
	store := open(t, dynamo.Options{TablePrefix: tables, Region: region, Meter: meter})
	ctx := context.Background()
	id := strings.TrimSuffix(prefix(), "-")
	raw, err := s3.Open(ctx, s3.Options{Bucket: "archive-" + id, Region: "us-east-1", Endpoint: endpoint(t), PathStyle: true,
		AccessKeyID: "test", SecretAccessKey: "test"})
	must(t, err)
	must(t, raw.CreateBucket(ctx))
	blobs := &countedBlobs{BlobStore: raw}
	node := func(store server.Store) *server.Service {
		svc, err := server.New(server.Config{SendRate: -1, PasswordCost: 4, Registration: server.RegistrationOpen, NodeID: fmt.Sprintf("%p", store),
			Backends: server.Backends{Store: store, Blobs: blobs, Sequencer: inmem.NewSequencer(), Rate: inmem.NewRateLimiter(time.Now),
				Inbox: inmem.NewInboxIndex(100), Profiles: inmem.NewProfileCache(time.Hour, time.Minute, time.Now),
				Registry: inmem.NewRegistry(), Broker: inmem.NewBroker()}})
		must(t, err)
		t.Cleanup(func() { svc.Shutdown(context.Background()) })
		return svc
	}
	svc, archiver := node(sender), node(store)
	users := []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan"}
	for _, u := range users {
		_, err := svc.Register(ctx, wire.RegisterRequest{UserID: u, Password: "password-" + u}, "")
		must(t, err)
	}
	content := strings.Repeat("a typical message of a few words ", 3) // ~100 bytes, as TestMessageCost
	sent := 0
	send := func(conv, user string, req wire.SendRequest) int64 {
		t.Helper()
		sent++
		req.MessageID = fmt.Sprint("m", sent)
		resp, _, err := svc.Send(ctx, user, conv, req, nil)
		must(t, err)
		return resp.SeqNo
	}
	// fill gives alice a direct conversation with each of peers, each with
	// perConv messages (every fifth with a reaction, one long edit).
	fill := func(peers []string, perConv int) []string {
		var convs []string
		for _, p := range peers {
			_, _, err := svc.CreateConversation(ctx, "alice", wire.CreateConversationRequest{Type: wire.Direct, Members: []string{p}})
			must(t, err)
			conv := wire.DirectConversationID("alice", p)
			convs = append(convs, conv)
			for i := range perConv {
				seq := send(conv, "alice", wire.SendRequest{Content: content})
				if i%5 == 0 {
					send(conv, p, wire.SendRequest{Kind: wire.KindReaction, TargetSeq: seq, Content: "👍"})
				}
				if i == 0 {
					send(conv, "alice", wire.SendRequest{Kind: wire.KindEdit, TargetSeq: seq, Content: content + "(edited)"})
				}
			}
		}
		return convs
	}
	pass := func(name string) passCost {
		t.Helper()
		meter.Reset()
		puts, dels := blobs.puts.Load(), blobs.deletes.Load()
		n, err := archiver.ArchiveOnce(ctx, store, -time.Hour)
		must(t, err)
		c := passCost{moved: n, rcu: meter.ReadUnits(), wcu: meter.Units(), puts: blobs.puts.Load() - puts, deletes: blobs.deletes.Load() - dels, calls: meter.String()}
		t.Logf("%s: %s", name, c)
		return c
	}
	scan := func(name string) (float64, int) {
		t.Helper()
		meter.Reset()
		n, err := store.ScanMessages(ctx)
		must(t, err)
		t.Logf("%s: the old archiver's Scan of %d rows: %g RCU", name, n, meter.ReadUnits())
		return meter.ReadUnits(), n
	}

	// Small: moto takes a few hundred writes a second, fewer under load, and
	// the Meter reads every item a write touches before and after it.
	convs := fill(users[1:3], 10) // 2 conversations of 10 messages, 2 reactions and 1 edit each
	first := pass("first pass")
	if first.moved != 2*11 || first.puts != int64(first.moved) {
		t.Fatalf("first pass: %s; want every message and edit archived, one PUT each", first)
	}
	t.Logf("per archived row: %.2f RCU, %.2f WCU, 1 S3 PUT", first.rcu/float64(first.moved), first.wcu/float64(first.moved))
	idle := pass("a pass with nothing due")
	if idle.moved != 0 || idle.wcu != 0 || idle.puts != 0 {
		t.Fatalf("a pass with nothing due wrote: %s", idle)
	}
	scanSmall, rowsSmall := scan("small table")

	more := func() passCost {
		for range 5 {
			send(convs[0], "alice", wire.SendRequest{Content: content})
		}
		return pass("5 new messages in one conversation")
	}
	small := more()
	fill(users[3:6], 20) // the table grows: 3 more conversations of 20, archived
	pass("archiving the new conversations")
	scanLarge, rowsLarge := scan("larger table")
	large := more()
	if small.moved != 5 || large.moved != 5 || small.rcu != large.rcu || small.wcu != large.wcu || small.puts != large.puts {
		t.Fatalf("the same work cost differently on a larger table:\n  %d rows: %s\n  %d rows: %s", rowsSmall, small, rowsLarge, large)
	}
	if scanLarge <= scanSmall {
		t.Fatalf("the Scan of %d rows cost %g RCU, of %d rows %g", rowsSmall, scanSmall, rowsLarge, scanLarge)
	}
	t.Logf("5 messages archived: %g RCU + %g WCU on either table; the Scan: %g RCU on %d rows, %g on %d",
		large.rcu, large.wcu, scanSmall, rowsSmall, scanLarge, rowsLarge)
}
