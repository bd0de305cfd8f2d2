package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	stdlog "log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// freePort asks the kernel for a loopback port nobody holds now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitTCP waits until something accepts connections on addr.
func waitTCP(ctx context.Context, addr string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("nothing listens on %s after %s: %w", addr, within, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// redisProc is a redis-server of the run's own, which the faults stop, restart
// (empty: no persistence) and flush.
type redisProc struct {
	bin  string
	port int
	dir  string
	cmd  *exec.Cmd
}

func (r *redisProc) addr() string { return "127.0.0.1:" + strconv.Itoa(r.port) }

func (r *redisProc) start(ctx context.Context) error {
	cmd := exec.Command(r.bin, "--port", strconv.Itoa(r.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", r.dir, "--logfile", filepath.Join(r.dir, "redis.log"))
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	r.cmd = cmd
	return waitTCP(ctx, r.addr(), 10*time.Second)
}

// kill stops Redis at once (SIGKILL): what a crashed or rebooted instance looks like.
func (r *redisProc) kill() {
	if r.cmd != nil && r.cmd.Process != nil {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
		r.cmd = nil
	}
}

// do runs one command on a connection of its own.
func (r *redisProc) do(ctx context.Context, args ...any) error {
	c := goredis.NewClient(&goredis.Options{Addr: r.addr()})
	defer c.Close()
	return c.Do(ctx, args...).Err()
}

// dynamoProxy stands between the nodes and moto. It lets one request through
// at a time, each until moto has answered it (a caller's timeout does not stop
// moto): moto snapshots every table of a region before a transaction and
// restores the snapshot when a condition fails, undoing writes that ran
// meanwhile, so writers in three processes would lose each other's writes
// (real DynamoDB does not; one process serialises its own writes with
// CHAT_DYNAMO_SERIAL_WRITES, which cannot reach across processes). And it can
// hang: requests are taken and not answered until it is released, as a
// DynamoDB that stops answering looks.
type dynamoProxy struct {
	srv    *http.Server
	ln     net.Listener
	turn   sync.Mutex
	mu     sync.Mutex
	hungCh chan struct{} // closed when the hang ends; nil while not hung
	held   atomic.Int64  // requests held by the current hang
}

func newDynamoProxy(target string) (*dynamoProxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("moto endpoint: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &dynamoProxy{ln: ln}
	forward := httputil.NewSingleHostReverseProxy(u)
	forward.ErrorLog = stdlog.New(io.Discard, "", 0) // a caller that gave up during a hang is expected
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		hung := p.hungCh
		p.mu.Unlock()
		if hung != nil {
			p.held.Add(1)
			select {
			case <-hung:
			case <-r.Context().Done():
				return // the caller gave up: it never gets an answer
			}
		}
		p.turn.Lock()
		defer p.turn.Unlock()
		if r.Context().Err() != nil {
			return // the caller gave up while it waited its turn: moto never sees it
		}
		// The turn ends when moto has answered, not when the caller gives up:
		// moto goes on with a request whose caller timed out, and the next one
		// let in meanwhile would overlap it (TestDynamoProxyOneAtATimeOutlastsACallerThatGaveUp).
		// A context that can be cancelled, by us only: with none, the
		// reverse proxy would watch the caller's connection instead.
		ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
		defer cancel()
		forward.ServeHTTP(w, r.WithContext(ctx))
	})}
	go p.srv.Serve(ln)
	return p, nil
}

func (p *dynamoProxy) url() string { return "http://" + p.ln.Addr().String() }

func (p *dynamoProxy) hang() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hungCh == nil {
		p.hungCh = make(chan struct{})
		p.held.Store(0)
	}
}

func (p *dynamoProxy) release() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hungCh != nil {
		close(p.hungCh)
		p.hungCh = nil
	}
	return p.held.Load()
}

func (p *dynamoProxy) close() { p.release(); p.srv.Close() }

// node is one chatserver process. Its port is fixed for the run, so a node
// killed and started again is found where it was.
type node struct {
	id   string
	bin  string
	port int
	args []string
	env  []string
	log  string // its log file
	cmd  *exec.Cmd
	done chan struct{}
}

func (n *node) url() string { return "http://127.0.0.1:" + strconv.Itoa(n.port) }

func (n *node) start(ctx context.Context) error {
	f, err := os.OpenFile(n.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(n.bin, n.args...)
	cmd.Env = append(os.Environ(), n.env...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start %s: %w", n.id, err)
	}
	n.cmd, n.done = cmd, make(chan struct{})
	go func() { cmd.Wait(); f.Close(); close(n.done) }()
	return waitHealthy(ctx, n.url(), 60*time.Second)
}

// kill9 ends the node as a crash does: no goodbye to Redis, sockets cut.
func (n *node) kill9() {
	if n.cmd == nil {
		return
	}
	_ = n.cmd.Process.Signal(syscall.SIGKILL)
	<-n.done
	n.cmd = nil
}

// stop ends the node gracefully (at the end of the run).
func (n *node) stop() {
	if n.cmd == nil {
		return
	}
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.done:
	case <-time.After(15 * time.Second):
		n.kill9()
	}
	n.cmd = nil
}

func waitHealthy(ctx context.Context, base string, within time.Duration) error {
	deadline := time.Now().Add(within)
	var last error
	for time.Now().Before(deadline) && ctx.Err() == nil {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %s", resp.Status)
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s not healthy after %s: %w", base, within, errors.Join(last, ctx.Err()))
}

// cluster is the run's Redis, DynamoDB proxy and nodes.
type cluster struct {
	log   *slog.Logger
	redis *redisProc
	dyn   *dynamoProxy
	nodes []*node
}

// outages reads the backend outages every node has logged so far; a log it
// cannot read is reported and skipped.
func (c *cluster) outages(log *slog.Logger) []backendOutage {
	var out []backendOutage
	now := time.Now()
	for _, n := range c.nodes {
		o, err := readOutages(n.id, n.log, now)
		if err != nil {
			log.Warn("read a node's log for backend outages", "node", n.id, "err", err)
		}
		out = append(out, o...)
	}
	return out
}

func (c *cluster) close() {
	var wg sync.WaitGroup
	for _, n := range c.nodes {
		wg.Go(n.stop)
	}
	wg.Wait()
	if c.dyn != nil {
		c.dyn.close()
	}
	if c.redis != nil {
		c.redis.kill()
	}
}
