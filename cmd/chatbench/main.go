// Command chatbench measures a chatserver against the design targets (docs/benchmarks.md): it
// drives the server over its real protocol (HTTP API and WebSocket) with many
// simulated users on loopback, and compares it with a raw WebSocket echo.
//
//	chatbench [flags] scenario...   scenarios: echo throughput latency fanout idle history reconnect storm cli tui tui-burst all
//	chatbench serve --data-dir DIR  a node with the bench's settings (used for the child process)
//	chatbench storm-worker          the storm's clients, one share of them (started by storm; job on stdin)
//
// By default each scenario starts a fresh server as a child process (so its CPU
// and memory are measured alone); --inproc runs it in this process; --server URL
// targets a running chatserver (started with --registration open --send-rate -1 --auth-rate -1
// --sockets-per-user -1 --sockets-per-addr -1 --metrics-token chatbench).
package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/chatterm/chat/client"
)

func main() {
	if name, ok, err := runChild(os.Args[1:]); ok {
		if err != nil {
			fmt.Fprintf(os.Stderr, "chatbench %s: %v\n", name, err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "chatbench:", err)
		os.Exit(1)
	}
}

// runChild runs the sub-commands the bench starts as processes of its own
// (serve, echo-serve, storm-worker); ok is false when args name none. The
// tests' binary runs them too (TestMain), so scenarios start their children
// from tests as from chatbench.
func runChild(args []string) (name string, ok bool, err error) {
	if len(args) == 0 {
		return "", false, nil
	}
	switch name = args[0]; name {
	case "serve":
		return name, true, serve(args[1:], os.Stdout, os.Stderr)
	case "echo-serve":
		return name, true, echoServe(os.Stdout)
	case "storm-worker":
		return name, true, stormWorker(os.Stdin, os.Stdout)
	}
	return "", false, nil
}

// bench holds the settings of one invocation and the results so far.
type bench struct {
	serverURL      string
	serverPID      int
	metricsToken   string // --server's /metrics token (its --metrics-token)
	inproc         bool
	noSync         bool
	fixedProcs     bool          // started servers keep GOMAXPROCS instead of adapting it as chatserver does
	maxInFlight    int           // started servers: 0 is the server default
	redeliverAfter time.Duration // started servers: 0 is the server default
	tmp            string
	cpuProfile     string
	pprofAddr      string
	profiles       int

	duration    time.Duration
	users       int
	window      int
	batch       int
	size        int
	ackInterval time.Duration
	rate        float64
	rates       []float64
	plotCSV     string

	groups         []int
	fanoutSenders  int
	fanoutDuration time.Duration
	fanoutAck      time.Duration
	idleConns      int
	idleUsers      int
	idleHold       time.Duration
	historyM       int
	historyConvs   int
	historyPages   int
	historyWarmup  int
	historyDir     string
	reconnectK     int
	reconnectRate  float64
	stormClients   int
	stormRedis     string
	stormApplyRate int
	stormNodes     int
	chatBin        string
	cliRuns        int
	tuiMessages    int
	tuiRuns        int

	stormWorkerClients int // storm: most client sockets one worker process holds

	tuiBurstHistory  int
	tuiBurstMessages int
	tuiBurstRate     float64
	tuiBurstLoadAll  bool
	tuiCPUProfile    string
	tailCPUProfile   string
	tuiBurstCases    map[string]bool
	tuiBurstOnly     string
	tuiBurstIdleMore int

	runID string
	dial  *dialer
	log   io.Writer

	report Report
}

// Report is the JSON output.
type Report struct {
	Started   time.Time      `json:"started"`
	Args      []string       `json:"args"`
	Machine   Machine        `json:"machine"`
	Target    string         `json:"target"`
	Rows      []Row          `json:"rows"`
	Scenarios map[string]any `json:"scenarios"`
}

// Machine says where the figures come from.
type Machine struct {
	NProc     int    `json:"nproc"`
	Model     string `json:"model_name"`
	GoVersion string `json:"go_version"`
	Kernel    string `json:"kernel"`
}

// Row is one line of the table: a figure and, where the design sets one, its target.
type Row struct {
	Scenario string  `json:"scenario"`
	Metric   string  `json:"metric"`
	Value    float64 `json:"value"`
	Unit     string  `json:"unit"`
	Target   string  `json:"target,omitempty"`
	Met      *bool   `json:"met,omitempty"`
}

func (b *bench) row(scenario, metric string, value float64, unit string) {
	b.report.Rows = append(b.report.Rows, Row{Scenario: scenario, Metric: metric, Value: value, Unit: unit})
}

func (b *bench) target(scenario, metric string, value float64, unit, target string, met bool) {
	b.report.Rows = append(b.report.Rows, Row{Scenario: scenario, Metric: metric, Value: value, Unit: unit, Target: target, Met: &met})
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	b := &bench{log: stderr, report: Report{Started: time.Now().UTC(), Args: args, Scenarios: map[string]any{}}}
	fs := flag.NewFlagSet("chatbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&b.serverURL, "server", "", "target a running chatserver at this URL (http://host:port) instead of starting one")
	fs.StringVar(&b.metricsToken, "metrics-token", "", "with --server: the token its /metrics needs (its --metrics-token; default "+benchMetricsToken+")")
	fs.IntVar(&b.serverPID, "server-pid", 0, "with --server: its pid, for CPU and memory from /proc (default: its /metrics)")
	fs.BoolVar(&b.inproc, "inproc", false, "run the server in this process (default: a child process per scenario)")
	fs.BoolVar(&b.noSync, "no-sync", false, "started servers: SQLite synchronous=NORMAL (no fsync per commit)")
	fs.BoolVar(&b.fixedProcs, "fixed-procs", false, "child-process servers keep GOMAXPROCS at the CPU count instead of adapting it to the load as chatserver does (--adaptive-procs)")
	fs.IntVar(&b.maxInFlight, "server-max-in-flight", 0, "started servers: sends being stored at once before more are refused as overloaded (0: the server's default)")
	fs.DurationVar(&b.redeliverAfter, "server-redeliver-after", 0, "started servers: the delivery worker's grace period, as chatserver's --redeliver-after (0: the server's default, 3s); a message a connected receiver has not acked this long after it was stored is sent again")
	fs.StringVar(&b.tmp, "tmp", "", "directory for the started servers' data (default: the system's)")
	fs.StringVar(&b.cpuProfile, "cpuprofile", "", "started servers (child process): write CPU profiles to FILE.1, FILE.2, …")
	fs.StringVar(&b.pprofAddr, "pprof", "", "started servers (child process): serve net/http/pprof on this address")
	jsonOut := fs.String("json", "", "also write the results as JSON to this file")
	fs.DurationVar(&b.duration, "duration", 10*time.Second, "throughput, latency, echo: how long to send")
	fs.IntVar(&b.users, "users", 200, "throughput, latency, echo: simulated users (pairs in 1:1 conversations)")
	fs.IntVar(&b.window, "window", 16, "throughput, echo: in-flight sends per user")
	fs.IntVar(&b.batch, "client-batch", 16, "throughput, latency, fanout: most frames a simulated user joins into one WebSocket message when several are ready (1: one per message; echo always sends one)")
	fs.IntVar(&b.size, "size", 100, "message content bytes")
	fs.DurationVar(&b.ackInterval, "ack-interval", client.DefaultAckDelay, "how long a receiver's cumulative ack waits, as the chat client's: it rides on the receiver's next send into the conversation if one comes sooner, else goes alone (0: an ack after every message)")
	fs.Float64Var(&b.rate, "rate", 0, "latency: offered messages/s (default: half the throughput measured in this run); echo: also offered open loop to an echo in a process of its own, for its CPU per message")
	rates := fs.String("rates", "", "latency (and echo, as --rate): comma-separated offered rates to sweep (for the plot)")
	fs.StringVar(&b.plotCSV, "plot-csv", "", "latency: write rate,p50,p95,p99,p99.9 rows to this CSV (scripts/plot-latency.sh draws it)")
	groups := fs.String("groups", "10,100,1000", "fanout: group sizes")
	fs.IntVar(&b.fanoutSenders, "fanout-senders", 2, "fanout: members sending into each group")
	fs.DurationVar(&b.fanoutDuration, "fanout-duration", 5*time.Second, "fanout: how long each group size runs")
	fs.DurationVar(&b.fanoutAck, "fanout-ack-interval", time.Second, "fanout: how long a receiver's cumulative ack waits at least (as --ack-interval, but longer: each ack is pushed to every member as a status frame); in large groups longer still, so each connection gets at most 100 status frames a second. Under the server's grace period, what is acked is never sent again")
	fs.IntVar(&b.idleConns, "idle-conns", 10000, "idle: connections")
	fs.IntVar(&b.idleUsers, "idle-users", 0, "idle: users the connections belong to (default: connections/10, at least 1)")
	fs.DurationVar(&b.idleHold, "idle-hold", 0, "idle: keep the connections open this long after measuring (to profile the server)")
	fs.IntVar(&b.historyM, "history-messages", 100000, "history: messages in the seeded store")
	fs.IntVar(&b.historyConvs, "history-conversations", 256, "history: conversations the messages are spread over (each gets at least 100)")
	fs.IntVar(&b.historyPages, "history-pages", 2000, "history: pages fetched")
	fs.IntVar(&b.historyWarmup, "history-warmup", 200, "history: pages fetched first and not counted (they warm the server's read connections)")
	fs.StringVar(&b.historyDir, "history-dir", "", "history: keep the seeded data directory here and reuse it on later runs")
	fs.IntVar(&b.reconnectK, "reconnect-clients", 500, "reconnect: clients dropped at once")
	fs.Float64Var(&b.reconnectRate, "reconnect-rate", 1000, "reconnect: messages/s, all senders together, sent to the dropped clients meanwhile")
	fs.IntVar(&b.stormClients, "storm-clients", 5000, "storm: clients reconnecting at once, spread evenly over --storm-nodes nodes")
	fs.IntVar(&b.stormNodes, "storm-nodes", 2, "storm: nodes sharing the Redis, each a child process (chatbench serve)")
	fs.IntVar(&b.stormWorkerClients, "storm-worker-clients", 9000, "storm: most clients one client process holds (a socket is an open file, and a process may hold 20,000 here: ulimit -Hn)")
	fs.IntVar(&b.stormApplyRate, "storm-apply-rate", 0, "storm: with the queue, registry updates per second each node's worker applies at most (chatserver's --kafka-apply-rate)")
	fs.StringVar(&b.stormRedis, "storm-redis", os.Getenv("CHAT_TEST_REDIS_ADDR"), "storm: the Redis the nodes share, and whose INFO is read (best one of its own)")
	fs.StringVar(&b.chatBin, "chat-bin", "", "cli, tui: the chat binary (default: chat beside chatbench, else on PATH)")
	fs.IntVar(&b.cliRuns, "cli-runs", 300, "cli: runs of each chat send command (after 10 not counted)")
	fs.IntVar(&b.tuiMessages, "tui-messages", 100000, "tui: messages in the cache (over 500 conversations)")
	fs.IntVar(&b.tuiRuns, "tui-runs", 20, "tui: starts of the TUI (after 2 not counted)")
	fs.IntVar(&b.tuiBurstHistory, "tui-burst-history", 50000, "tui-burst: messages in each conversation before the runs")
	fs.IntVar(&b.tuiBurstMessages, "tui-burst-messages", 2000, "tui-burst: messages per run")
	fs.Float64Var(&b.tuiBurstRate, "tui-burst-rate", 200, "tui-burst: messages/s of the steady runs (the bursts go as fast as the server stores them)")
	fs.StringVar(&b.tuiCPUProfile, "tui-cpuprofile", "", "tui-burst: the TUI writes a CPU profile of its whole run to this file (CHAT_CPUPROFILE)")
	fs.StringVar(&b.tailCPUProfile, "tail-cpuprofile", "", "tui-burst: chat tail writes a CPU profile of its whole run to this file (CHAT_CPUPROFILE)")
	burstCases := fs.String("tui-burst-cases", "open,inbox,tail", "tui-burst: the views measured, a comma-separated subset of open (the chat open), inbox (the inbox shown) and tail (chat tail)")
	fs.StringVar(&b.tuiBurstOnly, "tui-burst-only", "", "tui-burst: run only these cases, words from direct,group (conversation) open,inbox,tail (view) burst,steady (load); a kind with no word runs all of it; the views also need --tui-burst-cases (idle is always measured)")
	fs.IntVar(&b.tuiBurstIdleMore, "tui-burst-idle-more", 0, "tui-burst: after the idle measurement, this many more of 10 s each, 20 s apart (is the first one a tail of the history's load?)")
	fs.BoolVar(&b.tuiBurstLoadAll, "tui-burst-load-all", true, "tui-burst: load each conversation's whole history into the TUI (g, then G) before its runs")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: chatbench [flags] scenario...\n\nScenarios: echo throughput latency fanout idle history reconnect storm cli tui tui-burst all\n(all = echo throughput latency fanout idle history reconnect cli tui tui-burst)\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	var err error
	if b.rates, err = parseFloats(*rates); err != nil {
		return fmt.Errorf("--rates: %w", err)
	}
	gs, err := parseFloats(*groups)
	if err != nil {
		return fmt.Errorf("--groups: %w", err)
	}
	for _, g := range gs {
		if g < 2 || g > 1000 {
			return fmt.Errorf("--groups: a group has 2 to 1000 members, not %v", g)
		}
		b.groups = append(b.groups, int(g))
	}
	if b.users < 2 || b.users%2 != 0 {
		return fmt.Errorf("--users must be even and at least 2, not %d", b.users)
	}
	if b.window < 1 {
		return fmt.Errorf("--window must be at least 1")
	}
	if b.batch < 1 {
		return fmt.Errorf("--client-batch must be at least 1")
	}
	if b.maxInFlight < 0 {
		return fmt.Errorf("--server-max-in-flight must be at least 1 (or 0 for the server's default)")
	}
	if b.redeliverAfter < 0 {
		return fmt.Errorf("--server-redeliver-after must not be negative (0: the server's default)")
	}
	if b.fanoutAck <= 0 {
		return fmt.Errorf("--fanout-ack-interval must be positive, not %s", b.fanoutAck)
	}
	if b.historyPages < 1 || b.historyWarmup < 0 {
		return fmt.Errorf("--history-pages must be at least 1 and --history-warmup at least 0")
	}
	if b.cliRuns < 1 || b.tuiRuns < 1 {
		return fmt.Errorf("--cli-runs and --tui-runs must be at least 1")
	}
	if b.tuiBurstHistory < 0 || b.tuiBurstMessages < 1 || b.tuiBurstRate <= 0 {
		return fmt.Errorf("--tui-burst-history must be at least 0, --tui-burst-messages at least 1 and --tui-burst-rate positive")
	}
	if b.tuiBurstCases, err = parseBurstCases(*burstCases); err != nil {
		return fmt.Errorf("--tui-burst-cases: %w", err)
	}
	if b.tuiBurstIdleMore < 0 {
		return fmt.Errorf("--tui-burst-idle-more must be at least 0, not %d", b.tuiBurstIdleMore)
	}
	if _, err := parseBurstOnly(b.tuiBurstOnly); err != nil {
		return err
	}
	if b.stormWorkerClients < 1 {
		return fmt.Errorf("--storm-worker-clients must be at least 1, not %d", b.stormWorkerClients)
	}
	if b.tuiMessages < 1 {
		return fmt.Errorf("--tui-messages must be at least 1, not %d", b.tuiMessages)
	}
	if b.size < 20 || b.size > 16000 {
		return fmt.Errorf("--size must be between 20 and 16000 bytes")
	}
	if b.serverURL != "" && b.inproc {
		return errors.New("--server and --inproc exclude each other")
	}
	scenarios := fs.Args()
	if len(scenarios) == 0 {
		fs.Usage()
		return errors.New("name at least one scenario")
	}
	if len(scenarios) == 1 && scenarios[0] == "all" {
		scenarios = []string{"echo", "throughput", "latency", "fanout", "idle", "history", "reconnect", "cli", "tui", "tui-burst"}
	}
	known := map[string]func(context.Context) error{
		"echo": b.echo, "throughput": b.throughput, "latency": b.latency, "fanout": b.fanout,
		"idle": b.idle, "history": b.history, "reconnect": b.reconnect, "storm": b.storm, "cli": b.cli, "tui": b.tui,
		"tui-burst": b.tuiBurst,
	}
	for _, s := range scenarios {
		if known[s] == nil {
			return fmt.Errorf("unknown scenario %q (want echo, throughput, latency, fanout, idle, history, reconnect, storm, cli, tui, tui-burst or all)", s)
		}
	}
	raiseFileLimit()
	b.runID = strings.ToLower(rand.Text()[:5])
	conns := max(b.users, b.idleConns+b.idleConns/10, 2*b.reconnectK)
	b.dial = newDialer(conns)
	b.report.Machine = machine()
	switch {
	case b.serverURL != "":
		b.report.Target = "server " + b.serverURL
	case b.inproc:
		b.report.Target = "in-process node (embedded backend)"
	default:
		b.report.Target = "child-process node (embedded backend)"
	}
	if b.noSync {
		b.report.Target += ", no-sync"
	}
	if b.fixedProcs && !b.inproc && b.serverURL == "" {
		b.report.Target += ", fixed GOMAXPROCS"
	}

	var failed []string
	for _, s := range scenarios {
		fmt.Fprintf(stderr, "== %s\n", s)
		start := time.Now()
		if err := known[s](ctx); err != nil {
			fmt.Fprintf(stderr, "%s: FAILED: %v\n", s, err)
			failed = append(failed, fmt.Sprintf("%s: %v", s, err))
		} else {
			fmt.Fprintf(stderr, "%s: done in %.1fs\n", s, time.Since(start).Seconds())
		}
		if ctx.Err() != nil {
			break
		}
	}
	b.ratios()
	b.printTable(stdout)
	if *jsonOut != "" {
		data, err := json.MarshalIndent(b.report, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*jsonOut, append(data, '\n'), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", *jsonOut, err)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d scenario(s) failed:\n  %s", len(failed), strings.Join(failed, "\n  "))
	}
	return nil
}

// ratios adds throughput as a share of the echo rate when both ran, like for
// like: one frame per WebSocket message on both sides (the headline: what an
// interactive client does), and frames joined up to --client-batch on both.
func (b *bench) ratios() {
	rate := func(scenario, metric string) float64 {
		for _, r := range b.report.Rows {
			if r.Scenario == scenario && r.Metric == metric {
				return r.Value
			}
		}
		return 0
	}
	echo1, thr1 := rate("echo", "messages/s"), rate("throughput", unjoinedMetric)
	echoN, thrN := rate("echo", joinedMetric(b.batch)), rate("throughput", "messages/s")
	if b.batch <= 1 {
		thr1, echoN = thrN, 0 // the one run is unjoined
	}
	if echo1 > 0 && thr1 > 0 {
		b.target("throughput", "share of echo rate, one frame per message", thr1/echo1, "ratio", ">= 0.6", thr1/echo1 >= 0.6)
	}
	if echoN > 0 && thrN > 0 {
		b.target("throughput", fmt.Sprintf("share of echo rate, frames joined up to %d", b.batch), thrN/echoN, "ratio", ">= 0.5", thrN/echoN >= 0.5)
	}
}

func (b *bench) printTable(w io.Writer) {
	m := b.report.Machine
	fmt.Fprintf(w, "\nchatbench %s — %d CPUs (%s), %s, %s\n", b.report.Started.Format(time.RFC3339), m.NProc, m.Model, m.GoVersion, b.report.Target)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tMETRIC\tVALUE\tUNIT\tTARGET\tMET")
	for _, r := range b.report.Rows {
		met := ""
		if r.Met != nil {
			met = map[bool]string{true: "yes", false: "NO"}[*r.Met]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Scenario, r.Metric, fmtValue(r.Value), r.Unit, r.Target, met)
	}
	tw.Flush()
}

func fmtValue(v float64) string {
	switch {
	case v == float64(int64(v)) && v < 1e15:
		return strconv.FormatInt(int64(v), 10)
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
}

func parseFloats(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, v)
	}
	return out, nil
}

func machine() Machine {
	m := Machine{NProc: runtime.NumCPU(), GoVersion: runtime.Version()}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(data)) {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				m.Model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	if out, err := exec.Command("uname", "-r").Output(); err == nil {
		m.Kernel = strings.TrimSpace(string(out))
	}
	return m
}

// logf reports progress on stderr (the table goes to stdout).
func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "  "+format+"\n", args...)
}
