package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	_ "net/http/pprof" // served only with --pprof
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/chatterm/chat/internal/procs"
	"github.com/chatterm/chat/server/node"
)

// target is the server a scenario drives.
type target struct {
	url  string
	pid  int // for /proc readings; 0 when unknown (then /metrics is used)
	self bool
	stop func() error
	// signal reaches a child-process server (nil otherwise).
	signal func(os.Signal) error
}

// startTarget gives a scenario its server: the one named by --server, or a fresh
// one on dataDir (a child process by default, so its CPU and memory are its own;
// in this process with --inproc).
func (b *bench) startTarget(ctx context.Context, dataDir string) (*target, error) {
	if b.serverURL != "" {
		return &target{url: strings.TrimSuffix(b.serverURL, "/"), pid: b.serverPID, stop: func() error { return nil }}, nil
	}
	if b.inproc {
		n, err := node.Start(ctx, b.nodeConfig(dataDir))
		if err != nil {
			return nil, err
		}
		return &target{url: n.URL(), pid: os.Getpid(), self: true, stop: n.Close}, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := []string{"serve", "--data-dir", dataDir, "--no-sync=" + strconv.FormatBool(b.noSync), "--max-in-flight", strconv.Itoa(b.maxInFlight),
		"--adaptive-procs=" + strconv.FormatBool(!b.fixedProcs), "--redeliver-after", b.redeliverAfter.String()}
	if b.cpuProfile != "" {
		b.profiles++
		args = append(args, "--cpuprofile", fmt.Sprintf("%s.%d", b.cpuProfile, b.profiles))
	}
	if b.pprofAddr != "" {
		args = append(args, "--pprof", b.pprofAddr)
	}
	return startChild(exe, args)
}

// startChild starts this executable's server mode (serve, echo-serve) in a
// process of its own, so that its CPU and memory are read apart from the
// bench's, and waits for the "listening URL" line it prints.
func startChild(exe string, args []string) (*target, error) {
	cmd := exec.Command(exe, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start server process: %w", err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !ok {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("server process did not start (said %q): %v", line, err)
	}
	go io.Copy(io.Discard, out)
	return &target{url: url, pid: cmd.Process.Pid, signal: cmd.Process.Signal, stop: func() error {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			return errors.New("server process did not stop in 30 s; killed")
		}
	}}, nil
}

// benchMetricsToken guards /metrics on the servers the bench starts (the
// bench reads them; docs/security.md says why /metrics needs one).
const benchMetricsToken = "chatbench"

// nodeConfig is a bench server: open registration and no per-user or
// per-address limits, since every bench user connects from 127.0.0.1 and the
// idle scenario holds thousands of sockets.
func (b *bench) nodeConfig(dataDir string) node.Config {
	return node.Config{Addr: "127.0.0.1:0", DataDir: dataDir, Registration: "open", SendRate: -1, AuthRate: -1, PasswordCost: 4, NoSync: b.noSync, MaxInFlight: b.maxInFlight,
		RedeliverAfter: b.redeliverAfter, SocketsPerUser: -1, SocketsPerAddr: -1, MaxSockets: -1, ConnsPerAddr: -1, MaxConns: -1, MetricsToken: benchMetricsToken}
}

// serve is `chatbench serve`: a chatserver node with the bench's settings (open
// registration, no send rate limit, cheap bcrypt) that prints its URL, runs until
// SIGTERM, and can profile itself.
func serve(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("chatbench serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data-dir", "", "data directory (required)")
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	noSync := fs.Bool("no-sync", false, "SQLite synchronous=NORMAL")
	maxInFlight := fs.Int("max-in-flight", 0, "sends being stored at once before more are refused (0: the server's default)")
	redeliverAfter := fs.Duration("redeliver-after", 0, "the delivery worker's grace period (0: the server's default)")
	adaptiveProcs := fs.Bool("adaptive-procs", true, "GOMAXPROCS by load, as chatserver's --adaptive-procs (off when GOMAXPROCS is set)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	pprofAddr := fs.String("pprof", "", "serve net/http/pprof on this address")
	var shared serveShared
	shared.flags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dataDir == "" {
		return errors.New("serve: --data-dir is required")
	}
	raiseFileLimit()
	if *adaptiveProcs {
		defer procs.Adapt(procs.Options{})()
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	if *pprofAddr != "" {
		go http.ListenAndServe(*pprofAddr, nil) // DefaultServeMux holds the pprof handlers
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	b := &bench{noSync: *noSync, maxInFlight: *maxInFlight, redeliverAfter: *redeliverAfter}
	cfg := b.nodeConfig(*dataDir)
	cfg.Addr = *addr
	if err := shared.apply(&cfg); err != nil {
		return err
	}
	n, err := node.Start(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "listening %s\n", n.URL())
	// SIGUSR1 collects garbage and returns it to the OS, so that a memory reading
	// after it counts live data only (the idle scenario sends it).
	gc := make(chan os.Signal, 1)
	signal.Notify(gc, syscall.SIGUSR1)
	for {
		select {
		case <-ctx.Done():
			return n.Close()
		case err := <-n.Done():
			fmt.Fprintln(stderr, "serve:", err)
			return n.Close()
		case <-gc:
			debug.FreeOSMemory()
		}
	}
}

// raiseFileLimit lifts RLIMIT_NOFILE as far as allowed: idle runs hold a socket
// per connection (two when the server is in this process).
func raiseFileLimit() {
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) != nil {
		return
	}
	want := uint64(1 << 20)
	if b, err := os.ReadFile("/proc/sys/fs/nr_open"); err == nil {
		if n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil {
			want = n
		}
	}
	// Raising the hard limit needs privilege; fall back to the soft one up to it.
	if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: want, Max: want}) != nil {
		lim.Cur = lim.Max
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
}

// collectGarbage asks a server the bench started to collect garbage and give
// memory back, so RSS readings count live data; a --server is left alone.
func (t *target) collectGarbage() {
	switch {
	case t.self:
		debug.FreeOSMemory()
	case t.signal != nil:
		t.signal(syscall.SIGUSR1)
		time.Sleep(500 * time.Millisecond) // the signal is handled asynchronously
	}
}

// procStat is what the bench reads about the server process.
type procStat struct {
	cpu        float64 // user+system seconds
	rss        float64 // bytes
	goroutines float64 // -1 when unknown
	benchCPU   float64 // this process's user+system seconds: the simulated clients
	at         time.Time
	diskWrites float64 // bytes the server caused to be written to storage (/proc/<pid>/io); -1 when unknown
	// The embedded store's writer, from /metrics (zero on other backends).
	commits, commitJobs, writerBusy float64
}

// selfCPU is the CPU time this process has used, in seconds.
func selfCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// cpuRows reports the server's and (when the server is another process) the
// bench's own CPU per delivered message between two readings: the bench shares
// the machine, so what it spends is not the server's to use.
func (b *bench) cpuRows(scenario string, before, after procStat, delivered int64) {
	per := func(sec float64) float64 { return sec / float64(max(delivered, 1)) * 1e6 }
	if cpu := after.cpu - before.cpu; cpu > 0 {
		b.row(scenario, "server CPU per message", per(cpu), "µs")
	}
	if !b.inproc {
		b.row(scenario, "bench CPU per message", per(after.benchCPU-before.benchCPU), "µs")
	}
	if before.diskWrites >= 0 && after.diskWrites >= 0 && !b.inproc {
		b.row(scenario, "server disk writes per message", (after.diskWrites-before.diskWrites)/float64(max(delivered, 1))/1000, "KB")
	}
	// The embedded store's single writer: how big its group commits were, and
	// how much of the run it was busy (near 100%, it set the pace).
	if commits := after.commits - before.commits; commits > 0 {
		b.row(scenario, "store commits per second", commits/after.at.Sub(before.at).Seconds(), "commits/s")
		b.row(scenario, "store writes per commit", (after.commitJobs-before.commitJobs)/commits, "writes")
		b.row(scenario, "store writer busy", 100*(after.writerBusy-before.writerBusy)/after.at.Sub(before.at).Seconds(), "%")
	}
}

// readProc reads CPU and RSS from /proc/<pid> when the pid is known, else from the
// server's /metrics; goroutines always come from /metrics (go_goroutines).
func (b *bench) readProc(ctx context.Context, t *target) (procStat, error) {
	st := procStat{goroutines: -1, benchCPU: selfCPU(), at: time.Now(), diskWrites: -1}
	m, merr := b.scrape(ctx, t.url)
	if v, ok := m["go_goroutines"]; ok {
		st.goroutines = v
	}
	st.commits, st.commitJobs, st.writerBusy = m["chat_store_commits_total"], m["chat_store_commit_jobs_total"], m["chat_store_writer_busy_seconds_total"]
	if t.pid > 0 {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", t.pid))
		if err != nil {
			return st, err
		}
		// Fields after the command name (which may hold spaces) start at ") ".
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+2:])
		f := strings.Fields(rest)
		ut, _ := strconv.ParseFloat(f[11], 64)
		stt, _ := strconv.ParseFloat(f[12], 64)
		st.cpu = (ut + stt) / 100 // USER_HZ is 100 on Linux
		rss, err := procField(fmt.Sprintf("/proc/%d/status", t.pid), "VmRSS:")
		if err != nil {
			return st, err
		}
		kb, _ := strconv.ParseFloat(strings.TrimSuffix(rss, " kB"), 64)
		st.rss = kb * 1024
		// write_bytes: what reached the storage layer (page cache write-back
		// included, so fsync'd WAL and checkpoint pages both count). Unreadable
		// for another user's process: then the row is left out.
		if v, err := procField(fmt.Sprintf("/proc/%d/io", t.pid), "write_bytes:"); err == nil && v != "" {
			st.diskWrites, _ = strconv.ParseFloat(v, 64)
		}
		return st, nil
	}
	if merr != nil {
		return st, merr
	}
	st.cpu, st.rss = m["process_cpu_seconds_total"], m["process_resident_memory_bytes"]
	return st, nil
}

// procField is the value after key on its line of a /proc file ("" if absent).
func procField(path, key string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, key); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", nil
}

// scrape reads the unlabelled samples of the server's /metrics.
func (b *bench) scrape(ctx context.Context, base string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+cmp.Or(b.metricsToken, benchMetricsToken))
	resp, err := b.dial.api.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape metrics: %w", err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.ContainsRune(line, '{') {
			continue
		}
		name, val, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
			out[name] = v
		}
	}
	return out, sc.Err()
}

func tempDir(base, name string) (string, func(), error) {
	dir, err := os.MkdirTemp(base, "chatbench-"+name+"-")
	if err != nil {
		return "", nil, err
	}
	return filepath.Join(dir, "data"), func() { os.RemoveAll(dir) }, nil
}
