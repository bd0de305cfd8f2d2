// Command chaos runs three chatserver nodes on one Redis and one
// DynamoDB-compatible server (moto), with users sending and receiving 1:1 and
// in groups on every node, while it injects faults on a schedule: the pub/sub
// connections killed, Redis flushed, Redis killed and started again empty, a
// node killed -9 and started again, DynamoDB hung, and Redis stopped for a
// long outage (--redis-outage) during which only the nodes' sweeps carry
// messages between nodes. Then it checks that every
// message the server acknowledged reached every member's every device, once
// (by seq_no), in each sender's order, within a bound after the faults end, and
// prints what it counted, overall and per fault. It exits 1 when any count
// that must be 0 is not.
//
//	chaos --moto http://127.0.0.1:5055 --chatserver ./chatserver
//
// docs/reliability.md has a full-size run and what each fault tests.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(1)
	}
}

type config struct {
	moto, chatserver, redisServer, dir string
	users, devices                     int
	duration, bound                    time.Duration
	every                              time.Duration
	redisOutage                        time.Duration
	// strictOutage fails the run on a message acknowledged during the Redis
	// outage that took longer than outageLimit; off, the count is reported.
	strictOutage bool
	queue        registryQueue // --registry-queue (queue.go)
}

// redeliverAfter is the nodes' --redeliver-after. Their sweep period is ten of
// it: short here, so a Redis outage that fits in a short run still spans a
// whole sweep period.
const redeliverAfter = time.Second

// sweepPeriod is the nodes' sweep period while Redis is up (server/protocol's
// sweepEvery × --redeliver-after); while it is down they sweep every
// --redeliver-after.
const sweepPeriod = 10 * redeliverAfter

// defaultBound is what docs/reliability.md promises once the faults are over
// and the backends answer: a message reaches every device within a sweep
// period (the sweep reads every live device's pending rows once a period)
// and two grace periods (the sweep skips messages younger than one; the
// sender's node re-checks its receivers after one), plus 5 s for the loaded
// machine the run shares.
const defaultBound = sweepPeriod + 2*redeliverAfter + 5*time.Second

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c config
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.moto, "moto", os.Getenv("CHAT_TEST_DYNAMO_ENDPOINT"), "moto's endpoint (env CHAT_TEST_DYNAMO_ENDPOINT)")
	fs.StringVar(&c.chatserver, "chatserver", "chatserver", "the chatserver binary")
	fs.StringVar(&c.redisServer, "redis-server", "redis-server", "the redis-server binary (the run starts its own)")
	fs.StringVar(&c.dir, "dir", "", "directory for the nodes' data and logs (default: a temporary one, removed after a clean run)")
	fs.IntVar(&c.users, "users", 6, "users; each in two direct conversations, and groups of three")
	fs.IntVar(&c.devices, "devices", 2, "devices per user, each on another node")
	fs.DurationVar(&c.duration, "duration", 40*time.Second, "how long users send; the faults are spread over it")
	fs.DurationVar(&c.every, "every", 300*time.Millisecond, "pause between one user's sends")
	fs.DurationVar(&c.bound, "bound", defaultBound, "a message must reach every device this long after the later of its ack and the faults' end, and after every node's backends answer again (default: a sweep period and two grace periods, docs/reliability.md, + 5 s)")
	fs.DurationVar(&c.redisOutage, "redis-outage", 15*time.Second, "Redis stopped this long, last of the faults (0: no outage); the sweep period is "+sweepPeriod.String())
	fs.BoolVar(&c.strictOutage, "strict-outage", false, "fail the run when a message acknowledged during the Redis outage reached a device more than "+outageLimit.String()+" after its ack (off: counted and reported)")
	c.queue.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if c.redisOutage < 0 || c.redisOutage > c.duration/2 {
		return errors.New("--redis-outage must be between 0 and half of --duration: the other faults come before it")
	}
	if c.moto == "" {
		return errors.New("no moto endpoint: give --moto or set CHAT_TEST_DYNAMO_ENDPOINT (scripts/services.sh starts one)")
	}
	if c.users < 3 || c.devices < 1 {
		return errors.New("--users must be at least 3 and --devices at least 1")
	}
	for _, bin := range []*string{&c.chatserver, &c.redisServer} {
		p, err := exec.LookPath(*bin)
		if err != nil {
			return fmt.Errorf("%s: %w", *bin, err)
		}
		*bin = p
	}
	keep := c.dir != ""
	if keep {
		if err := os.MkdirAll(c.dir, 0o750); err != nil {
			return err
		}
	} else {
		d, err := os.MkdirTemp("", "chaos-")
		if err != nil {
			return err
		}
		c.dir = d
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	if err := c.queue.start(); err != nil {
		return err
	}
	defer c.queue.close()
	log.Info("chaos: " + c.queue.describe())
	cl, err := startCluster(ctx, c, log)
	if cl != nil {
		defer cl.close()
	}
	if err != nil {
		return fmt.Errorf("%w (node logs in %s)", err, c.dir)
	}
	r, err := exercise(ctx, c, cl, log)
	if err != nil {
		return fmt.Errorf("%w (node logs in %s)", err, c.dir)
	}
	r.print(stdout)
	if err := r.verdict(); err != nil {
		return fmt.Errorf("%w (node logs in %s)", err, c.dir)
	}
	if !keep {
		cl.close()
		os.RemoveAll(c.dir)
	}
	return nil
}

func startCluster(ctx context.Context, c config, log *slog.Logger) (*cluster, error) {
	cl := &cluster{log: log}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cl.redis = &redisProc{bin: c.redisServer, port: port, dir: c.dir}
	if err := cl.redis.start(ctx); err != nil {
		return cl, err
	}
	if cl.dyn, err = newDynamoProxy(c.moto); err != nil {
		return cl, err
	}
	run := strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	for i := range 3 {
		port, err := freePort()
		if err != nil {
			return cl, err
		}
		id := "n" + strconv.Itoa(i+1)
		n := &node{id: id, bin: c.chatserver, port: port, log: filepath.Join(c.dir, id+".log"),
			env: []string{"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "CHAT_DYNAMO_SKIP_CHECKSUM=1"},
			args: []string{"--addr", "127.0.0.1:" + strconv.Itoa(port), "--node-id", id, "--data-dir", filepath.Join(c.dir, id),
				"--registration", "open", "--dynamodb-endpoint", cl.dyn.url(), "--dynamodb-region", "chaos" + run,
				"--table-prefix", "chaos_", "--redis-addrs", cl.redis.addr(), "--redis-prefix", "chaos:",
				// Each request waits its turn at the proxy: a call's deadline must
				// cover that queue, not only moto; still shorter than the hang, so
				// sends during it time out (maybe_stored) and are sent again.
				"--dynamodb-timeout", "2s", "--redeliver-after", redeliverAfter.String(),
				"--auth-rate", "-1", "--sockets-per-addr", "-1", "--send-rate", "-1"}}
		n.args = append(n.args, c.queue.nodeArgs()...)
		if i == 0 {
			n.args = append(n.args, "--create-tables")
		}
		cl.nodes = append(cl.nodes, n)
		if err := n.start(ctx); err != nil {
			return cl, err
		}
	}
	return cl, nil
}

// fault is one step of the schedule, at a time into the send phase.
type fault struct {
	at     time.Duration
	name   string
	do     func(ctx context.Context) error
	outage bool // the long Redis outage: the report checks the sweep's delays in it
}

// schedule spreads the short faults over the send phase less the Redis
// outage, and puts the outage last, ending before the sends do, so messages
// are sent all through it and the bound counts from its end. A fault whose
// time has passed when the one before it ends starts at once.
func schedule(cl *cluster, c config, log *slog.Logger) []fault {
	n2 := cl.nodes[1]
	span := float64(c.duration - c.redisOutage)
	at := func(share float64) time.Duration { return time.Duration(share * span) }
	fs := []fault{
		{at: at(0.10), name: "pub/sub connections killed (CLIENT KILL TYPE pubsub)", do: func(ctx context.Context) error {
			return cl.redis.do(ctx, "CLIENT", "KILL", "TYPE", "pubsub")
		}},
		{at: at(0.20), name: "Redis flushed (FLUSHALL)", do: func(ctx context.Context) error { return cl.redis.do(ctx, "FLUSHALL") }},
		{at: at(0.30), name: "Redis killed; started again empty 3 s later", do: func(ctx context.Context) error {
			cl.redis.kill()
			sleep(ctx, 3*time.Second)
			return cl.redis.start(ctx)
		}},
		{at: at(0.50), name: "node n2 killed -9; started again 2 s later", do: func(ctx context.Context) error {
			n2.kill9()
			sleep(ctx, 2*time.Second)
			return n2.start(ctx)
		}},
		{at: at(0.70), name: "DynamoDB hung for 3 s", do: func(ctx context.Context) error {
			cl.dyn.hang()
			sleep(ctx, 3*time.Second)
			held := cl.dyn.release()
			log.Info("DynamoDB answers again", "requests_held", held)
			return nil
		}},
	}
	if c.redisOutage > 0 {
		fs = append(fs, fault{at: at(0.85), name: fmt.Sprintf("Redis stopped for %s; started again empty", c.redisOutage), outage: true,
			do: func(ctx context.Context) error {
				cl.redis.kill()
				sleep(ctx, c.redisOutage)
				return cl.redis.start(ctx)
			}})
	}
	return fs
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}

// exercise sets up users and conversations, runs senders, devices and the
// fault schedule, and returns what it saw.
func exercise(ctx context.Context, c config, cl *cluster, log *slog.Logger) (*report, error) {
	setupCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	pop, err := populate(setupCtx, c, cl.nodes)
	if err != nil {
		return nil, fmt.Errorf("setup: %w", err)
	}
	devCtx, stopDevices := context.WithCancel(ctx)
	defer stopDevices()
	devDone := make(chan struct{})
	var devices []*device
	for ui, u := range pop.users {
		for d := range c.devices {
			dev := newDevice(fmt.Sprintf("%s/%d", u, d), u, pop.tokens[u], pop.convsOf[u], cl.nodes, (ui+d)%len(cl.nodes))
			devices = append(devices, dev)
		}
	}
	running := len(devices)
	finished := make(chan struct{}, running)
	for _, d := range devices {
		go func() { d.run(devCtx); finished <- struct{}{} }()
	}
	go func() {
		for range running {
			<-finished
		}
		close(devDone)
	}()
	sleep(ctx, time.Second) // devices connected and synced

	led := &ledger{}
	sendCtx, stopSending := context.WithTimeout(ctx, c.duration)
	defer stopSending()
	// Senders resend a message until it is acknowledged; past this they give
	// up and it counts as never acknowledged. Long enough for a store whose
	// breakers keep opening after the faults (moto at load) to answer.
	drainCtx, stopDrain := context.WithTimeout(ctx, c.duration+3*c.bound)
	defer stopDrain()
	senders := make(chan struct{})
	go func() {
		defer close(senders)
		done := make(chan struct{}, len(pop.users))
		for _, u := range pop.users {
			s := &sender{user: u, token: pop.tokens[u], convs: pop.convsOf[u], nodes: cl.nodes, every: c.every, led: led}
			go func() { s.run(sendCtx, drainCtx); done <- struct{}{} }()
		}
		for range pop.users {
			<-done
		}
	}()

	start := time.Now()
	var faultLog []faultRun
	var faultsEnd time.Time
	for _, f := range schedule(cl, c, log) {
		sleep(ctx, time.Until(start.Add(f.at)))
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		t := time.Since(start)
		log.Info("fault", "at", t.Round(100*time.Millisecond), "what", f.name)
		began := time.Now()
		if err := f.do(ctx); err != nil {
			return nil, fmt.Errorf("fault %q: %w", f.name, err)
		}
		faultsEnd = time.Now()
		faultLog = append(faultLog, faultRun{name: f.name, offset: t, start: began, end: faultsEnd, outage: f.outage})
	}
	<-senders
	log.Info("sending ended; waiting for every device to hold every acknowledged message", "acked", len(led.acks))

	// Done when every device holds what it should, or when the last message
	// acknowledged is due (report.due: the bound, moved past the backend
	// outages the nodes log meanwhile), or at a last limit past which the
	// store never settled.
	r := &report{cfg: c, faults: faultLog, faultsEnd: faultsEnd, start: start}
	limit := time.Now().Add(3 * c.bound)
	for ctx.Err() == nil {
		r.outages = cl.outages(log)
		if r.check(pop, led, devices).missing == 0 {
			break
		}
		now := time.Now()
		if now.After(r.due(led.last())) || now.After(limit) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	stopDevices()
	<-devDone
	outages := cl.outages(log)
	*r = r.check(pop, led, devices)
	r.cfg, r.faults, r.faultsEnd, r.start, r.outages = c, faultLog, faultsEnd, start, outages
	return r, nil
}

// population is the run's users and conversations.
type population struct {
	users   []string
	tokens  map[string]string
	convsOf map[string][]string // user → conversations
	members map[string][]string // conversation → users
}

func populate(ctx context.Context, c config, nodes []*node) (*population, error) {
	p := &population{tokens: map[string]string{}, convsOf: map[string][]string{}, members: map[string][]string{}}
	base := nodes[0].url()
	for i := range c.users {
		u := "user" + strconv.Itoa(i)
		var auth struct {
			Token string `json:"token"`
		}
		if _, err := call(ctx, "POST", base+"/v1/register", "", map[string]string{"user_id": u, "password": "password-" + u}, &auth); err != nil {
			return nil, fmt.Errorf("register %s: %w", u, err)
		}
		p.users = append(p.users, u)
		p.tokens[u] = auth.Token
	}
	add := func(members []string, req map[string]any) error {
		var conv struct {
			ID string `json:"conversation_id"`
		}
		if _, err := call(ctx, "POST", base+"/v1/conversations", p.tokens[members[0]], req, &conv); err != nil {
			return fmt.Errorf("create conversation of %s: %w", strings.Join(members, ", "), err)
		}
		p.members[conv.ID] = members
		for _, m := range members {
			p.convsOf[m] = append(p.convsOf[m], conv.ID)
		}
		return nil
	}
	for i, u := range p.users {
		peer := p.users[(i+1)%len(p.users)]
		if err := add([]string{u, peer}, map[string]any{"type": "direct", "members": []string{peer}}); err != nil {
			return nil, err
		}
	}
	for i := 0; i+3 <= len(p.users); i += 3 {
		g := p.users[i : i+3]
		if err := add(g, map[string]any{"type": "group", "name": "group " + strconv.Itoa(i/3), "members": g[1:]}); err != nil {
			return nil, err
		}
	}
	return p, nil
}
