package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/chatterm/chat/internal/testenv"
)

// The storm's peak rate is commands over a window of Redis's own time: an
// INFO reply that reaches a loaded bench late (here held 300 ms on its way)
// must not make the next window look a millisecond long and its rate
// hundreds of times the real one. A Redis of the test's own: the rate is
// every client's.
func TestPeakRateOnRedisClock(t *testing.T) {
	testenv.RedisAddr(t) // the integration tests' switch: redis-server is installed
	addr := startRedis(t)
	slow := slowFirstInfo(t, addr, 300*time.Millisecond)

	direct := goredis.NewClient(&goredis.Options{Addr: addr})
	defer direct.Close()
	ctx := context.Background()
	v0, t0, err := commandsAt(ctx, direct)
	if err != nil {
		t.Fatal(err)
	}
	// A steady load: PINGs one after another for the sampler's whole run.
	loadCtx, stopLoad := context.WithCancel(ctx)
	var load sync.WaitGroup
	load.Go(func() {
		for loadCtx.Err() == nil {
			direct.Ping(loadCtx)
		}
	})
	rdb := goredis.NewClient(&goredis.Options{Addr: slow})
	defer rdb.Close()
	sctx, stop := context.WithTimeout(ctx, 800*time.Millisecond)
	defer stop()
	var peak atomic.Int64
	sampleCommands(sctx, rdb, &peak)
	stopLoad()
	load.Wait()
	v1, t1, err := commandsAt(ctx, direct)
	if err != nil {
		t.Fatal(err)
	}
	mean := float64(v1-v0) / t1.Sub(t0).Seconds()
	if p := float64(peak.Load()); p <= 0 || p > 3*mean {
		t.Fatalf("peak %.0f commands/s against a mean of %.0f over the run: want a peak above 0 and at most 3 × the mean", p, mean)
	}
	t.Logf("peak %d commands/s, mean %.0f", peak.Load(), mean)
}

// startRedis runs a redis-server of the test's own on a free port.
func startRedis(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir := t.TempDir()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--logfile", filepath.Join(dir, "log"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr
		} else if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s: %v", addr, err)
		}
	}
}

// slowFirstInfo is a TCP proxy to addr that holds the first INFO stats reply
// it carries back for d, as a descheduled bench would read it late.
func slowFirstInfo(t *testing.T, addr string, d time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var held atomic.Bool
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", addr)
			if err != nil {
				c.Close()
				continue
			}
			go func() { io.Copy(s, c); s.Close() }()
			go func() {
				defer c.Close()
				buf := make([]byte, 64<<10)
				for {
					n, err := s.Read(buf)
					if n > 0 {
						if bytes.Contains(buf[:n], []byte("total_commands_processed")) && !held.Swap(true) {
							time.Sleep(d)
						}
						if _, err := c.Write(buf[:n]); err != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}
