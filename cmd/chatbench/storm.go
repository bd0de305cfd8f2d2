package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/wire"
)

// StormResult is one run of the storm scenario.
type StormResult struct {
	Queue        bool    `json:"queue"` // registry updates through Kafka (kfake in this process)
	Clients      int     `json:"clients"`
	HelloSeconds float64 `json:"all_hello_s"`      // reconnect → every client has its hello
	Registered   float64 `json:"all_registered_s"` // reconnect → every connection is in the registry
	PeakCmds     float64 `json:"peak_redis_cmds_per_s"`
	Commands     int64   `json:"redis_cmds"` // INFO commandstats calls over the storm, script-inner ones included
	Sends        int     `json:"sends"`
	SendP50Ms    float64 `json:"send_p50_ms"`
	SendP99Ms    float64 `json:"send_p99_ms"`
}

// storm: N clients connect at once to --storm-nodes nodes that share a Redis
// (--storm-redis, one the bench may read INFO of: best one of its own), as
// every client of a fleet does after its nodes were replaced, first with synchronous registry writes, then with registry updates
// through Kafka (franz-go's kfake, in this process: no broker can be
// installed here). It measures Redis's commands per second at the peak (INFO
// total_commands_processed sampled every 100 ms), the time until every
// connection is in the registry (the nodes' reverse sets, SCARD), and the
// latency of a send (send → sent) made meanwhile on node 0. Each node keeps
// its own embedded store: the storm is the registry's, and the send's two
// users are both on node 0.
func (b *bench) storm(ctx context.Context) error {
	var results []StormResult
	defer func() { b.report.Scenarios["storm"] = results }()
	if b.stormRedis == "" {
		return errors.New("storm: --storm-redis is required (a Redis of its own, say redis-server --port 6399 --save '')")
	}
	for _, queue := range []bool{false, true} {
		r, err := b.stormOnce(ctx, queue)
		if err != nil {
			return fmt.Errorf("storm (queue %v): %w", queue, err)
		}
		name := "storm-direct"
		if queue {
			name = "storm-kafka"
		}
		b.row(name, "clients", float64(r.Clients), "")
		b.row(name, "all hello", r.HelloSeconds, "s")
		b.row(name, "all registered", r.Registered, "s")
		b.row(name, "redis peak", r.PeakCmds, "cmd/s")
		b.row(name, "redis commands", float64(r.Commands), "")
		b.row(name, "send p50", r.SendP50Ms, "ms")
		b.row(name, "send p99", r.SendP99Ms, "ms")
		results = append(results, r)
	}
	return nil
}

func (b *bench) stormOnce(ctx context.Context, queue bool) (StormResult, error) {
	res := StormResult{Queue: queue, Clients: b.stormClients}
	rdb := goredis.NewClient(&goredis.Options{Addr: b.stormRedis})
	defer rdb.Close()
	prefix := "storm:" + b.runID + ":" + strconv.FormatBool(queue) + ":"
	var brokers []string
	if queue {
		c, err := kfake.NewCluster(kfake.NumBrokers(1))
		if err != nil {
			return res, err
		}
		defer c.Close()
		brokers = c.ListenAddrs()
	}
	var nodes []*node.Node
	defer func() {
		for _, n := range nodes {
			n.Close()
		}
	}()
	if b.stormNodes < 1 {
		return res, fmt.Errorf("--storm-nodes %d: want at least 1", b.stormNodes)
	}
	for i := range b.stormNodes {
		dir, cleanup, err := tempDir(b.tmp, "storm")
		if err != nil {
			return res, err
		}
		defer cleanup()
		cfg := b.nodeConfig(dir)
		cfg.Logger = slog.New(slog.NewTextHandler(b.log, &slog.HandlerOptions{Level: slog.LevelWarn}))
		cfg.Production = node.Production{RedisAddrs: []string{b.stormRedis}, RedisPrefix: prefix, KafkaBrokers: brokers, KafkaTopic: "storm", KafkaApplyRate: b.stormApplyRate}
		n, err := node.Start(ctx, cfg)
		if err != nil {
			return res, fmt.Errorf("node %d: %w", i, err)
		}
		nodes = append(nodes, n)
	}
	// The clients spread evenly over the nodes.
	each := b.stormClients / len(nodes)
	urls := make([]string, 0, b.stormClients)
	tokens := make([]string, 0, b.stormClients)
	for i, n := range nodes {
		names := b.userNames(fmt.Sprintf("st%v%d-", queue, i), each)
		toks, err := (&api{base: n.URL(), hc: b.dial.api}).register(ctx, names)
		if err != nil {
			return res, err
		}
		for _, tok := range toks {
			urls, tokens = append(urls, n.URL()), append(tokens, tok)
		}
	}
	res.Clients = len(tokens)
	registered := func() (int64, error) {
		var sum int64
		for _, n := range nodes {
			v, err := rdb.SCard(ctx, prefix+"node:{"+n.Service().NodeID()+"}").Result()
			if err != nil {
				return 0, err
			}
			sum += v
		}
		return sum, nil
	}
	waitRegistered := func(want int64, within time.Duration) error {
		deadline := time.Now().Add(within)
		for {
			got, err := registered()
			if err != nil {
				return err
			}
			if got == want {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%d connections in the registry after %v, want %d", got, within, want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	dialAll := func(limit int) ([]*wsConn, error) {
		conns := make([]*wsConn, len(tokens))
		var wg sync.WaitGroup
		var firstErr atomic.Value
		sem := make(chan struct{}, limit)
		for i := range tokens {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				c, err := b.dial.dial(ctx, urls[i], tokens[i])
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				conns[i] = c
			})
		}
		wg.Wait()
		if err, _ := firstErr.Load().(error); err != nil {
			closeAll(conns)
			return nil, err
		}
		return conns, nil
	}
	// The send measured during the storm: two users on node 0, connected
	// throughout.
	a := &api{base: nodes[0].URL(), hc: b.dial.api}
	pairNames := b.userNames(fmt.Sprintf("stp%v-", queue), 2)
	pairTok, err := a.register(ctx, pairNames)
	if err != nil {
		return res, err
	}
	conv, err := a.createConversation(ctx, pairTok[0], wire.CreateConversationRequest{Type: wire.Direct, Members: []string{pairNames[1]}})
	if err != nil {
		return res, err
	}
	sender, err := b.dial.dial(ctx, nodes[0].URL(), pairTok[0])
	if err != nil {
		return res, err
	}
	defer closeAll([]*wsConn{sender})
	// The recipient stays offline: its messages wait in pending_deliveries,
	// which costs the send what a connected one would, less the copy.
	if err := waitRegistered(1, time.Minute); err != nil {
		return res, fmt.Errorf("the sender: %w", err)
	}

	before, err := commandCalls(ctx, rdb)
	if err != nil {
		return res, err
	}
	sctx, stop := context.WithCancel(ctx)
	var bg sync.WaitGroup
	var peak atomic.Int64
	bg.Go(func() { sampleCommands(sctx, rdb, &peak) })
	var lat []time.Duration
	bg.Go(func() { lat = sendSteadily(sctx, sender, conv, b.runID+fmt.Sprintf("-st%v-", queue)) })

	start := time.Now()
	conns, err := dialAll(len(tokens)) // all at once
	if err != nil {
		stop()
		bg.Wait()
		return res, err
	}
	res.HelloSeconds = time.Since(start).Seconds()
	err = waitRegistered(int64(len(tokens))+1, 2*time.Minute)
	res.Registered = time.Since(start).Seconds()
	// A storm shorter than a few sends (a small N) still measures some.
	time.Sleep(time.Until(start.Add(200 * time.Millisecond)))
	stop()
	bg.Wait()
	closeAll(conns)
	if err != nil {
		return res, err
	}
	after, err := commandCalls(ctx, rdb)
	if err != nil {
		return res, err
	}
	res.Commands = after - before
	res.PeakCmds = float64(peak.Load())
	res.Sends = len(lat)
	if len(lat) > 0 {
		slices.Sort(lat)
		res.SendP50Ms = float64(lat[len(lat)/2]) / 1e6
		res.SendP99Ms = float64(lat[min(len(lat)-1, len(lat)*99/100)]) / 1e6
	}
	b.logf("storm queue=%v: %d clients, all hello %.2fs, all registered %.2fs, redis peak %.0f cmd/s, %d commands, send p99 %.1f ms over %d sends",
		queue, res.Clients, res.HelloSeconds, res.Registered, res.PeakCmds, res.Commands, res.SendP99Ms, res.Sends)
	return res, nil
}

// sampleCommands keeps in peak the highest rate of commands Redis processed
// (per second) over a window of 100 ms, the last window being what is left
// when ctx ends (a storm shorter than a window still has one).
func sampleCommands(ctx context.Context, rdb *goredis.Client, peak *atomic.Int64) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	lastV, lastAt := int64(-1), time.Time{}
	sample := func(ctx context.Context) {
		v, err := totalCommands(ctx, rdb)
		if err != nil {
			return
		}
		now := time.Now()
		if lastV >= 0 {
			if d := now.Sub(lastAt).Seconds(); d > 0 {
				if rate := int64(float64(v-lastV) / d); rate > peak.Load() {
					peak.Store(rate)
				}
			}
		}
		lastV, lastAt = v, now
	}
	for {
		sample(ctx)
		select {
		case <-ctx.Done():
			sample(context.WithoutCancel(ctx))
			return
		case <-t.C:
		}
	}
}

// infoField reads one numeric field of an INFO section.
func infoField(info, field string) (int64, bool) {
	for line := range strings.SplitSeq(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

func totalCommands(ctx context.Context, rdb *goredis.Client) (int64, error) {
	info, err := rdb.Info(ctx, "stats").Result()
	if err != nil {
		return 0, err
	}
	if v, ok := infoField(info, "total_commands_processed"); ok {
		return v, nil
	}
	return 0, errors.New("INFO stats has no total_commands_processed")
}

// commandCalls sums INFO commandstats' calls (commands run inside scripts
// count there, unlike in total_commands_processed).
func commandCalls(ctx context.Context, rdb *goredis.Client) (int64, error) {
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0, err
	}
	var sum int64
	for line := range strings.SplitSeq(info, "\r\n") {
		_, rest, ok := strings.Cut(line, ":calls=")
		if !ok {
			continue
		}
		n, _, _ := strings.Cut(rest, ",")
		v, err := strconv.ParseInt(n, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("commandstats line %q: %w", line, err)
		}
		sum += v
	}
	return sum, nil
}

// sendSteadily sends one message at once and then every 20 ms until ctx
// ends, each after the last one's sent frame, and returns the send → sent latencies.
func sendSteadily(ctx context.Context, c *wsConn, conv, idPrefix string) []time.Duration {
	var out []time.Duration
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for n := 0; ; n++ {
		if n > 0 {
			select {
			case <-ctx.Done():
				return out
			case <-t.C:
			}
		}
		id := strconv.Itoa(n)
		start := time.Now()
		if err := c.write(ctx, wire.Frame{Type: wire.TypeSend, ID: id, ConversationID: conv, MessageID: idPrefix + id, Content: "storm " + id}); err != nil {
			return out
		}
		for {
			f, err := c.read(ctx)
			if err != nil {
				return out
			}
			if f.ID == id && (f.Type == wire.TypeSent || f.Type == wire.TypeError) {
				out = append(out, time.Since(start))
				break
			}
		}
	}
}
