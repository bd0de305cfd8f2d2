package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/chatterm/chat/wire"
)

// withTarget starts a fresh server for one scenario (or uses --server) and stops it after.
func (b *bench) withTarget(ctx context.Context, name string, fn func(t *target) error) error {
	dir, cleanup, err := tempDir(b.tmp, name)
	if err != nil {
		return err
	}
	defer cleanup()
	t, err := b.startTarget(ctx, dir)
	if err != nil {
		return err
	}
	err = fn(t)
	if serr := t.stop(); serr != nil && err == nil && b.serverURL == "" {
		err = fmt.Errorf("stop server: %w", serr)
	}
	return err
}

func (b *bench) userNames(kind string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("b%s%s%d", b.runID, kind, i)
	}
	return out
}

// pairs registers n users in n/2 direct conversations; both members of a pair
// send into their conversation.
func (b *bench) pairs(ctx context.Context, t *target, kind string, n int) ([]*peer, error) {
	a := &api{base: t.url, hc: b.dial.api}
	names := b.userNames(kind, n)
	tokens, err := a.register(ctx, names)
	if err != nil {
		return nil, err
	}
	peers := make([]*peer, n)
	for i := 0; i < n; i += 2 {
		conv, err := a.createConversation(ctx, tokens[i], wire.CreateConversationRequest{Type: wire.Direct, Members: []string{names[i+1]}})
		if err != nil {
			return nil, err
		}
		for j := i; j < i+2; j++ {
			peers[j] = &peer{idx: j, user: names[j], token: tokens[j], conv: conv, sends: true, recipients: 1}
		}
	}
	return peers, nil
}

func (b *bench) connect(ctx context.Context, t *target, peers []*peer) error {
	tokens := make([]string, len(peers))
	for i, p := range peers {
		tokens[i] = p.token
	}
	conns, err := b.dial.dialAll(ctx, t.url, tokens, 128)
	if err != nil {
		return err
	}
	for i, p := range peers {
		p.conn = conns[i]
	}
	return nil
}

// checkChat turns a run's losses and errors into a scenario failure.
func checkChat(r ChatResult) error {
	var errs []error
	if r.Errors > 0 {
		errs = append(errs, fmt.Errorf("%d errors (first: %s)", r.Errors, r.FirstErr))
	}
	if r.Lost > 0 {
		errs = append(errs, fmt.Errorf("%d messages lost (sent %d, stored %d, delivered %d of %d)", r.Lost, r.Sent, r.Stored, r.Delivered, r.Expected))
	}
	if r.Disorder > 0 {
		errs = append(errs, fmt.Errorf("%d messages duplicated (received again %s or more after their ack) or out of order on a live connection", r.Disorder, ackSettle))
	}
	if r.Delivered == 0 {
		errs = append(errs, errors.New("nothing was delivered"))
	}
	return errors.Join(errs...)
}

// copiesRow reports the copies of unacked messages the server sent again, when
// there were any: none are expected while receivers ack within the grace period.
func (b *bench) copiesRow(scenario string, r ChatResult) {
	if r.Copies > 0 {
		b.row(scenario, "copies of unacked messages sent again (dropped)", float64(r.Copies), "messages")
	}
}

func (b *bench) chatRows(scenario string, r ChatResult) {
	b.row(scenario, "messages stored/delivered/acked", float64(min(r.Stored, r.Delivered)), "messages")
	b.row(scenario, "lost, duplicated or reordered", float64(r.Lost+r.Disorder), "messages")
	b.copiesRow(scenario, r)
	if r.Retried > 0 {
		b.row(scenario, "sends and acks refused as overloaded, sent again", float64(r.Retried), "frames")
	}
	b.row(scenario, "send→stored p99", r.StoreLat.P99, "ms")
	b.row(scenario, "send→delivered p50", r.Latency.P50, "ms")
	b.row(scenario, "send→delivered p95", r.Latency.P95, "ms")
	b.row(scenario, "send→delivered p99.9", r.Latency.P999, "ms")
}

func (b *bench) throughput(ctx context.Context) error {
	return b.withTarget(ctx, "throughput", func(t *target) error {
		peers, err := b.pairs(ctx, t, "t", b.users)
		if err != nil {
			return err
		}
		if err := b.connect(ctx, t, peers); err != nil {
			return err
		}
		before, _ := b.readProc(ctx, t)
		r := runChat(ctx, peers, chatOpts{window: b.window, size: b.size, duration: b.duration, ackInterval: b.ackInterval, batch: b.batch})
		after, _ := b.readProc(ctx, t)
		b.report.Scenarios["throughput"] = r
		b.target("throughput", "messages/s", r.Rate, "msg/s", ">= 50000", r.Rate >= 50000)
		b.chatRows("throughput", r)
		b.row("throughput", "send→delivered p99", r.Latency.P99, "ms")
		b.cpuRows("throughput", before, after, r.Delivered)
		if err := checkChat(r); err != nil {
			return err
		}
		if b.batch <= 1 {
			return nil
		}
		// Again with one frame per WebSocket message, as an interactive
		// client sends: the headline share of the echo compares this one.
		peers, err = b.pairs(ctx, t, "t1", b.users)
		if err != nil {
			return err
		}
		if err := b.connect(ctx, t, peers); err != nil {
			return err
		}
		r1 := runChat(ctx, peers, chatOpts{window: b.window, size: b.size, duration: b.duration, ackInterval: b.ackInterval, batch: 1})
		b.report.Scenarios["throughput_unjoined"] = r1
		b.row("throughput", unjoinedMetric, r1.Rate, "msg/s")
		b.row("throughput", "send→delivered p99, one frame per message", r1.Latency.P99, "ms")
		return checkChat(r1)
	})
}

// unjoinedMetric names the rate of a run whose clients send one frame per
// WebSocket message.
const unjoinedMetric = "messages/s, one frame per message"

// offeredRates is what --rates or --rate ask to offer open loop (none: nil).
func (b *bench) offeredRates() []float64 {
	if len(b.rates) == 0 && b.rate > 0 {
		return []float64{b.rate}
	}
	return b.rates
}

// latency offers fixed rates (open loop) and reports the percentiles at each.
func (b *bench) latency(ctx context.Context) error {
	rates := b.offeredRates()
	if len(rates) == 0 {
		for _, r := range b.report.Rows {
			if r.Scenario == "throughput" && r.Metric == "messages/s" {
				rates = []float64{r.Value / 2}
			}
		}
	}
	if len(rates) == 0 {
		return errors.New("give --rate or --rates, or run throughput first in the same invocation (half its rate is used)")
	}
	var csv []string
	var results []ChatResult
	err := b.withTarget(ctx, "latency", func(t *target) error {
		peers, err := b.pairs(ctx, t, "l", b.users)
		if err != nil {
			return err
		}
		for _, rate := range rates {
			if err := b.connect(ctx, t, peers); err != nil {
				return err
			}
			before, _ := b.readProc(ctx, t)
			// A window deep enough that pacing, not acks, sets the pace.
			r := runChat(ctx, peers, chatOpts{window: 1024, size: b.size, duration: b.duration, rate: rate, ackInterval: b.ackInterval, batch: b.batch})
			after, _ := b.readProc(ctx, t)
			results = append(results, r)
			b.logf("offered %.0f/s: achieved %.0f/s, p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms", rate, r.Rate, r.Latency.P50, r.Latency.P99, r.Latency.P999)
			csv = append(csv, fmt.Sprintf("%.0f,%.0f,%.3f,%.3f,%.3f,%.3f", rate, r.Rate, r.Latency.P50, r.Latency.P95, r.Latency.P99, r.Latency.P999))
			name := "latency@" + strconv.FormatFloat(rate, 'f', 0, 64)
			b.row(name, "achieved", r.Rate, "msg/s")
			b.target(name, "send→delivered p99", r.Latency.P99, "ms", "< 50", r.Latency.P99 < 50)
			b.chatRows(name, r)
			b.cpuRows(name, before, after, r.Delivered)
			if err := checkChat(r); err != nil {
				return fmt.Errorf("at %.0f/s: %w", rate, err)
			}
			if r.Rate < rate*0.9 {
				b.logf("offered %.0f/s but only %.0f/s got through: the server is saturated", rate, r.Rate)
			}
		}
		return nil
	})
	b.report.Scenarios["latency"] = results
	if b.plotCSV != "" && len(csv) > 0 {
		data := "offered,achieved,p50_ms,p95_ms,p99_ms,p99_9_ms\n" + joinLines(csv)
		if werr := os.WriteFile(b.plotCSV, []byte(data), 0o644); werr != nil && err == nil {
			err = werr
		}
	}
	return err
}

func joinLines(lines []string) string {
	s := ""
	for _, l := range lines {
		s += l + "\n"
	}
	return s
}

// FanoutResult is one group size's run.
type FanoutResult struct {
	Members       int        `json:"members"`
	Chat          ChatResult `json:"chat"`
	ServerCPU     float64    `json:"server_cpu_s"`
	PerCPUSecond  float64    `json:"deliveries_per_cpu_s"`
	CPUIncludesUs bool       `json:"cpu_includes_bench_clients"`
}

// statusPerConn bounds the status frames the receivers' acks bring each
// connection per second (fanoutAckInterval).
const statusPerConn = 100

// fanoutAckInterval is how long a receiver's ack waits in a group of members:
// every ack is pushed to every other member as a status frame, so the members'
// acks bring each connection members-1 frames per interval, which at the
// client's 50 ms would measure ack traffic rather than message fan-out. At
// least every, and long enough that those frames stay under statusPerConn a
// second: 1 s up to 100 members, 10 s at 1,000.
func fanoutAckInterval(every time.Duration, members int) time.Duration {
	return max(every, time.Duration(members-1)*time.Second/statusPerConn)
}

// fanout sends into groups of each size. Receivers ack (fanoutAckInterval):
// the server sends again what a connected receiver has not acked after its
// grace period (--redeliver-after, 3 s), and a copy of a message received
// again after its ack fails the run. In a group large enough that its acks come
// less often than that, receivers get copies of what they have not acked yet;
// the run counts them (a client drops them) and does not fail on them.
func (b *bench) fanout(ctx context.Context) error {
	var results []FanoutResult
	err := b.withTarget(ctx, "fanout", func(t *target) error {
		a := &api{base: t.url, hc: b.dial.api}
		for _, g := range b.groups {
			names := b.userNames("g"+strconv.Itoa(g)+"x", g)
			tokens, err := a.register(ctx, names)
			if err != nil {
				return err
			}
			conv, err := a.createConversation(ctx, tokens[0], wire.CreateConversationRequest{Type: wire.Group, Name: fmt.Sprintf("bench %d", g), Members: names[1:]})
			if err != nil {
				return err
			}
			peers := make([]*peer, g)
			for i := range peers {
				peers[i] = &peer{idx: i, user: names[i], token: tokens[i], conv: conv, sends: i < b.fanoutSenders, recipients: int64(g - 1)}
			}
			if err := b.connect(ctx, t, peers); err != nil {
				return err
			}
			// The "conversation" pushes of the group's creation may still be queued
			// on the sockets; they are ignored by the reader.
			before, err := b.readProc(ctx, t)
			if err != nil {
				return err
			}
			r := runChat(ctx, peers, chatOpts{window: b.window, size: b.size, duration: b.fanoutDuration, ackInterval: fanoutAckInterval(b.fanoutAck, g), batch: b.batch})
			after, err := b.readProc(ctx, t)
			if err != nil {
				return err
			}
			fr := FanoutResult{Members: g, Chat: r, ServerCPU: after.cpu - before.cpu, CPUIncludesUs: t.self}
			if fr.ServerCPU > 0 {
				fr.PerCPUSecond = float64(r.Delivered) / fr.ServerCPU
			}
			results = append(results, fr)
			name := fmt.Sprintf("fanout %d", g)
			b.row(name, "deliveries/s", r.DelivRate, "deliveries/s")
			b.row(name, "deliveries per server CPU-second", fr.PerCPUSecond, "deliveries")
			b.row(name, "messages/s", r.Rate, "msg/s")
			b.row(name, "send→delivered p99", r.Latency.P99, "ms")
			b.row(name, "lost, duplicated or reordered", float64(r.Lost+r.Disorder), "messages")
			b.copiesRow(name, r)
			b.logf("group of %d: %.0f deliveries/s, %.0f per CPU-second, p99 %.1f ms", g, r.DelivRate, fr.PerCPUSecond, r.Latency.P99)
			if err := checkChat(r); err != nil {
				return fmt.Errorf("group of %d: %w", g, err)
			}
		}
		return nil
	})
	b.report.Scenarios["fanout"] = results
	return err
}

// IdleResult is the idle scenario's measurement.
type IdleResult struct {
	Conns           int     `json:"connections"`
	Users           int     `json:"users"`
	ConnectSeconds  float64 `json:"connect_s"`
	RSSBefore       float64 `json:"rss_before_bytes"`
	RSSAfter        float64 `json:"rss_after_bytes"`
	RSSPerConn      float64 `json:"rss_per_connection_bytes"`
	HeapPerConn     float64 `json:"heap_per_connection_bytes"`
	StackPerConn    float64 `json:"stack_per_connection_bytes"`
	GoroutinesPer   float64 `json:"goroutines_per_connection"`
	IncludesClients bool    `json:"includes_bench_clients"`
}

func (b *bench) idle(ctx context.Context) error {
	// Each connection is a socket here and one in the server (two in this process
	// with --inproc); the file limit caps how many one run can hold.
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil {
		per := uint64(1)
		if b.inproc {
			per = 2
		}
		if need := uint64(b.idleConns)*per + 1000; need > lim.Cur {
			return fmt.Errorf("--idle-conns %d needs about %d open files, but RLIMIT_NOFILE is %d and cannot be raised here (ulimit -Hn; raising it needs CAP_SYS_RESOURCE)",
				b.idleConns, need, lim.Cur)
		}
	}
	return b.withTarget(ctx, "idle", func(t *target) error {
		users := b.idleUsers
		if users <= 0 {
			users = max(b.idleConns/10, 1)
		}
		a := &api{base: t.url, hc: b.dial.api}
		names := b.userNames("i", users)
		tokens, err := a.register(ctx, names)
		if err != nil {
			return err
		}
		t.collectGarbage()
		before, err := b.readProc(ctx, t)
		if err != nil {
			return err
		}
		m0, _ := b.scrape(ctx, t.url)
		conn := make([]string, b.idleConns)
		for i := range conn {
			conn[i] = tokens[i%users]
		}
		start := time.Now()
		conns, err := b.dial.dialAll(ctx, t.url, conn, 256)
		if err != nil {
			return err
		}
		defer closeAll(conns)
		connectTime := time.Since(start)
		b.logf("%d connections up in %.1fs", len(conns), connectTime.Seconds())
		time.Sleep(time.Second) // let the server settle (lazily started goroutines end)
		t.collectGarbage()
		after, err := b.readProc(ctx, t)
		if err != nil {
			return err
		}
		m1, _ := b.scrape(ctx, t.url)
		// Every connection must still answer: a sample pings and waits for its pong.
		for i := 0; i < len(conns); i += max(len(conns)/50, 1) {
			if err := ping(ctx, conns[i]); err != nil {
				return fmt.Errorf("connection %d does not answer a ping: %w", i, err)
			}
		}
		if b.idleHold > 0 {
			b.logf("holding the connections for %s (profile the server now)", b.idleHold)
			time.Sleep(b.idleHold)
		}
		k := float64(len(conns))
		r := IdleResult{Conns: len(conns), Users: users, ConnectSeconds: connectTime.Seconds(), RSSBefore: before.rss, RSSAfter: after.rss,
			RSSPerConn: (after.rss - before.rss) / k, IncludesClients: t.self}
		if m0 != nil && m1 != nil {
			r.HeapPerConn = (m1["go_memstats_heap_inuse_bytes"] - m0["go_memstats_heap_inuse_bytes"]) / k
			r.StackPerConn = (m1["go_memstats_stack_inuse_bytes"] - m0["go_memstats_stack_inuse_bytes"]) / k
		}
		if before.goroutines >= 0 && after.goroutines >= 0 {
			r.GoroutinesPer = (after.goroutines - before.goroutines) / k
		}
		b.report.Scenarios["idle"] = r
		b.row("idle", "connections", k, "conns")
		b.target("idle", "server RSS per connection", r.RSSPerConn/1024, "KiB", "<= 16", r.RSSPerConn <= 16<<10)
		b.row("idle", "server heap in use per connection", r.HeapPerConn/1024, "KiB")
		b.row("idle", "server stacks per connection", r.StackPerConn/1024, "KiB")
		b.row("idle", "server goroutines per connection", r.GoroutinesPer, "goroutines")
		b.row("idle", "connect time", r.ConnectSeconds, "s")
		if t.self {
			b.logf("note: --inproc: the RSS delta includes the bench's own client connections")
		}
		return nil
	})
}

func ping(ctx context.Context, c *wsConn) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.write(ctx, wire.Frame{Type: wire.TypePing, ID: "p"}); err != nil {
		return err
	}
	for {
		f, err := c.read(ctx)
		if err != nil {
			return err
		}
		if f.Type == wire.TypePong {
			return nil
		}
	}
}
