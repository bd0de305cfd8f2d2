package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/chatterm/chat/wire"
)

// StormResult is one run of the storm scenario.
type StormResult struct {
	Queue        bool    `json:"queue"` // registry updates through Kafka (kfake in this process)
	Clients      int     `json:"clients"`
	Workers      int     `json:"workers"`          // processes the clients were split over
	Failed       int     `json:"failed"`           // clients without a hello
	HelloSeconds float64 `json:"all_hello_s"`      // the start → every client has its hello (or failed)
	HelloP50     float64 `json:"hello_p50_s"`      // the start → a client's hello, over those that got one
	HelloP99     float64 `json:"hello_p99_s"`      // the same, p99
	Registered   float64 `json:"all_registered_s"` // the start → every connection is in the registry
	RegistryLag  float64 `json:"registry_lag_s"`   // the last hello → every connection in the registry
	PeakCmds     float64 `json:"peak_redis_cmds_per_s"`
	Commands     int64   `json:"redis_cmds"` // INFO commandstats calls over the storm, script-inner ones included
	Sends        int     `json:"sends"`
	SendP50Ms    float64 `json:"send_p50_ms"`
	SendP99Ms    float64 `json:"send_p99_ms"`
	// Where the machine's CPU went, in seconds: the nodes' from the start to
	// every connection in the registry; the client processes' until their
	// last hello (their set-up included); Redis's (INFO cpu) and this
	// process's (the sender, and kfake with the queue) over the storm.
	NodesCPU   float64 `json:"nodes_cpu_s"`
	ClientsCPU float64 `json:"clients_cpu_s"`
	RedisCPU   float64 `json:"redis_cpu_s"`
	BenchCPU   float64 `json:"bench_cpu_s"`
	// Errors counts the clients that failed by kind, with an example of each.
	Errors   map[string]int    `json:"errors,omitempty"`
	Examples map[string]string `json:"error_examples,omitempty"`
}

// storm: N clients connect at once to --storm-nodes nodes that share a Redis
// (--storm-redis, one the bench may read INFO of: best one of its own), as
// every client of a fleet does after its nodes were replaced, first with
// synchronous registry writes, then with registry updates through Kafka
// (franz-go's kfake, in this process: no broker can be installed here). The
// nodes are child processes (chatbench serve), the clients are split over
// worker processes (chatbench storm-worker) of at most --storm-worker-clients
// each: a process holds at most 20,000 open files on this machine, one per
// socket. It measures the time until every client has its hello, Redis's
// commands per second at the peak (INFO total_commands_processed sampled
// every 100 ms, on Redis's clock), the time until every connection is in the registry (the
// nodes' reverse sets, SCARD), and the latency of a send (send → sent) made
// meanwhile on node 0. Each node keeps its own embedded store: the storm is
// the registry's, and the send's two users are both on node 0.
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
		b.row(name, "client processes", float64(r.Workers), "")
		b.row(name, "clients failed", float64(r.Failed), "")
		b.row(name, "all hello", r.HelloSeconds, "s")
		b.row(name, "hello p50", r.HelloP50, "s")
		b.row(name, "hello p99", r.HelloP99, "s")
		b.row(name, "all registered", r.Registered, "s")
		b.row(name, "registry lag after the last hello", r.RegistryLag, "s")
		b.row(name, "redis peak", r.PeakCmds, "cmd/s")
		b.row(name, "redis commands", float64(r.Commands), "")
		b.row(name, "nodes CPU", r.NodesCPU, "s")
		b.row(name, "client processes CPU", r.ClientsCPU, "s")
		b.row(name, "redis CPU", r.RedisCPU, "s")
		b.row(name, "bench CPU (kfake with the queue)", r.BenchCPU, "s")
		b.row(name, "send p50", r.SendP50Ms, "ms")
		b.row(name, "send p99", r.SendP99Ms, "ms")
		results = append(results, r)
	}
	return nil
}

// stormHelloWait is how long a storm client waits for its hello: thousands of
// connects queue at the nodes, on a machine the clients share.
const stormHelloWait = 2 * time.Minute

// stormNode is one node of the storm, a child process.
type stormNode struct {
	*target
	id string
}

func (b *bench) startStormNodes(queue bool, prefix string, brokers []string) ([]stormNode, func(), error) {
	var nodes []stormNode
	var cleanups []func()
	cleanup := func() {
		for _, n := range nodes {
			n.stop()
		}
		for _, c := range cleanups {
			c()
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	for i := range b.stormNodes {
		dir, rm, err := tempDir(b.tmp, "storm")
		if err != nil {
			cleanup()
			return nil, nil, err
		}
		cleanups = append(cleanups, rm)
		id := fmt.Sprintf("storm-%s-%v-%d", b.runID, queue, i)
		args := []string{"serve", "--data-dir", dir, "--no-sync=" + strconv.FormatBool(b.noSync), "--max-in-flight", strconv.Itoa(b.maxInFlight),
			"--adaptive-procs=" + strconv.FormatBool(!b.fixedProcs), "--node-id", id, "--log-level", "warn",
			"--redis-addrs", b.stormRedis, "--redis-prefix", prefix}
		if queue {
			args = append(args, "--kafka-brokers", strings.Join(brokers, ","), "--kafka-topic", "storm", "--kafka-apply-rate", strconv.Itoa(b.stormApplyRate))
		}
		t, err := startChild(exe, args)
		if err != nil {
			cleanup()
			return nil, nil, fmt.Errorf("node %d: %w", i, err)
		}
		nodes = append(nodes, stormNode{target: t, id: id})
	}
	return nodes, cleanup, nil
}

func (b *bench) stormOnce(ctx context.Context, queue bool) (StormResult, error) {
	res := StormResult{Queue: queue, Clients: b.stormClients}
	if b.stormNodes < 1 {
		return res, fmt.Errorf("--storm-nodes %d: want at least 1", b.stormNodes)
	}
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
	nodes, stopNodes, err := b.startStormNodes(queue, prefix, brokers)
	if err != nil {
		return res, err
	}
	defer stopNodes()
	// The clients spread evenly over the nodes (client i on node i mod
	// nodes), and every worker holds some of each node's.
	clients := make([]stormClient, b.stormClients)
	for i, n := range nodes {
		names := b.userNames(fmt.Sprintf("st%v%d-", queue, i), (b.stormClients-i+len(nodes)-1)/len(nodes))
		toks, err := (&api{base: n.url, hc: b.dial.api}).register(ctx, names)
		if err != nil {
			return res, err
		}
		for j, tok := range toks {
			clients[j*len(nodes)+i] = stormClient{URL: n.url, Token: tok}
		}
	}
	res.Clients = len(clients)
	registered := func() (int64, error) {
		var sum int64
		for _, n := range nodes {
			v, err := rdb.SCard(ctx, prefix+"node:{"+n.id+"}").Result()
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
	// The send measured during the storm: two users on node 0, connected
	// throughout.
	a := &api{base: nodes[0].url, hc: b.dial.api}
	pairNames := b.userNames(fmt.Sprintf("stp%v-", queue), 2)
	pairTok, err := a.register(ctx, pairNames)
	if err != nil {
		return res, err
	}
	conv, err := a.createConversation(ctx, pairTok[0], wire.CreateConversationRequest{Type: wire.Direct, Members: []string{pairNames[1]}})
	if err != nil {
		return res, err
	}
	sender, err := b.dial.dial(ctx, nodes[0].url, pairTok[0])
	if err != nil {
		return res, err
	}
	defer closeAll([]*wsConn{sender})
	// The recipient stays offline: its messages wait in pending_deliveries,
	// which costs the send what a connected one would, less the copy.
	if err := waitRegistered(1, time.Minute); err != nil {
		return res, fmt.Errorf("the sender: %w", err)
	}

	exe, err := os.Executable()
	if err != nil {
		return res, err
	}
	fleet, err := startStormWorkers(exe, clients, b.stormWorkerClients, stormHelloWait)
	if err != nil {
		return res, err
	}
	defer fleet.close()
	res.Workers = len(fleet.workers)

	before, err := commandCalls(ctx, rdb)
	if err != nil {
		return res, err
	}
	cpuBefore, err := stormCPU(ctx, nodes, rdb)
	if err != nil {
		return res, err
	}
	sctx, stop := context.WithCancel(ctx)
	var bg sync.WaitGroup
	var peak atomic.Int64
	bg.Go(func() { sampleCommands(sctx, rdb, &peak) })
	var lat []time.Duration
	bg.Go(func() { lat = sendSteadily(sctx, sender, conv, b.runID+fmt.Sprintf("-st%v-", queue)) })

	// The start leaves the workers time to read it: all connects begin together.
	start := time.Now().Add(200 * time.Millisecond)
	rep, err := fleet.storm(start)
	if err != nil {
		stop()
		bg.Wait()
		return res, err
	}
	hellos := time.Since(start)
	res.Failed, res.Errors, res.Examples = rep.failed(), rep.Errors, rep.Examples
	if len(rep.HelloMs) > 0 {
		slices.Sort(rep.HelloMs)
		res.HelloSeconds = rep.HelloMs[len(rep.HelloMs)-1] / 1e3
		res.HelloP50 = rep.HelloMs[len(rep.HelloMs)/2] / 1e3
		res.HelloP99 = rep.HelloMs[min(len(rep.HelloMs)-1, len(rep.HelloMs)*99/100)] / 1e3
	}
	if res.Failed > 0 {
		res.HelloSeconds = hellos.Seconds() // the failures waited too
		b.logf("storm queue=%v: %d of %d clients failed: %v (e.g. %v)", queue, res.Failed, res.Clients, rep.Errors, rep.Examples)
	}
	err = waitRegistered(int64(len(rep.HelloMs))+1, 2*time.Minute)
	res.Registered = time.Since(start).Seconds()
	if cpuAfter, cerr := stormCPU(ctx, nodes, rdb); cerr == nil {
		res.NodesCPU, res.RedisCPU, res.BenchCPU = cpuAfter.nodes-cpuBefore.nodes, cpuAfter.redis-cpuBefore.redis, cpuAfter.bench-cpuBefore.bench
	}
	res.ClientsCPU = rep.CPU
	res.RegistryLag = max(0, res.Registered-res.HelloSeconds)
	// A storm shorter than a few sends (a small N) still measures some.
	time.Sleep(time.Until(start.Add(200 * time.Millisecond)))
	stop()
	bg.Wait()
	if cerr := fleet.close(); cerr != nil {
		b.logf("storm queue=%v: closing the client processes: %v", queue, cerr)
	}
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
	b.logf("storm queue=%v: %d clients in %d processes, %d failed, all hello %.2fs (p50 %.2fs), all registered %.2fs, redis peak %.0f cmd/s, %d commands, send p99 %.1f ms over %d sends",
		queue, res.Clients, res.Workers, res.Failed, res.HelloSeconds, res.HelloP50, res.Registered, res.PeakCmds, res.Commands, res.SendP99Ms, res.Sends)
	return res, nil
}

// stormCPUs are CPU seconds used so far.
type stormCPUs struct{ nodes, redis, bench float64 }

func stormCPU(ctx context.Context, nodes []stormNode, rdb *goredis.Client) (stormCPUs, error) {
	c := stormCPUs{bench: selfCPU()}
	for _, n := range nodes {
		v, err := procCPU(n.pid)
		if err != nil {
			return c, err
		}
		c.nodes += v.Seconds()
	}
	info, err := rdb.Info(ctx, "cpu").Result()
	if err != nil {
		return c, err
	}
	for _, f := range []string{"used_cpu_sys", "used_cpu_user"} {
		for line := range strings.SplitSeq(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, f+":"); ok {
				x, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return c, fmt.Errorf("INFO cpu %s: %w", f, err)
				}
				c.redis += x
			}
		}
	}
	return c, nil
}

// sampleCommands keeps in peak the highest rate of commands Redis processed
// (per second) over a window of 100 ms, the last window being what is left
// when ctx ends (a storm shorter than a window still has one). A window's
// length is Redis's own (TIME, read with INFO in one round trip): a reply
// that reached this loaded process late would otherwise shorten the next
// window as seen from here and inflate its rate (TestPeakRateOnRedisClock).
func sampleCommands(ctx context.Context, rdb *goredis.Client, peak *atomic.Int64) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	lastV, lastAt := int64(-1), time.Time{}
	sample := func(ctx context.Context) {
		v, at, err := commandsAt(ctx, rdb)
		if err != nil {
			return
		}
		if lastV >= 0 {
			if d := at.Sub(lastAt).Seconds(); d > 0 {
				if rate := int64(float64(v-lastV) / d); rate > peak.Load() {
					peak.Store(rate)
				}
			}
		}
		lastV, lastAt = v, at
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

// commandsAt reads INFO total_commands_processed and Redis's clock in one
// pipeline, so both are taken together.
func commandsAt(ctx context.Context, rdb *goredis.Client) (int64, time.Time, error) {
	var clock *goredis.TimeCmd
	var info *goredis.StringCmd
	if _, err := rdb.Pipelined(ctx, func(p goredis.Pipeliner) error {
		clock, info = p.Time(ctx), p.Info(ctx, "stats")
		return nil
	}); err != nil {
		return 0, time.Time{}, err
	}
	if v, ok := infoField(info.Val(), "total_commands_processed"); ok {
		return v, clock.Val(), nil
	}
	return 0, time.Time{}, errors.New("INFO stats has no total_commands_processed")
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
