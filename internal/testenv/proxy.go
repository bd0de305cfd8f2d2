package testenv

import (
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
)

// Proxy forwards a local port to a shared test service and can be taken down
// and brought back on the same port: the service becoming unreachable for the
// code under test, and returning, without stopping the service other tests
// use.
type Proxy struct {
	tb     testing.TB
	target string // host:port

	mu    sync.Mutex
	addr  string
	ln    net.Listener
	conns map[net.Conn]bool
	// hung swallows what clients send instead of forwarding it: the service
	// accepting connections and requests but never answering.
	hung atomic.Bool
}

// NewProxy starts a proxy to target, a host:port or a URL (its host is used);
// it is stopped when the test ends.
func NewProxy(tb testing.TB, target string) *Proxy {
	tb.Helper()
	if u, err := url.Parse(target); err == nil && u.Host != "" {
		target = u.Host
	}
	p := &Proxy{tb: tb, target: target, addr: "127.0.0.1:0", conns: map[net.Conn]bool{}}
	p.Start()
	tb.Cleanup(p.Stop)
	return p
}

// Addr is the proxy's host:port (the same across Stop and Start).
func (p *Proxy) Addr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.addr
}

// URL is Addr as an http URL, for endpoints given as URLs.
func (p *Proxy) URL() string { return "http://" + p.Addr() }

// Start listens again on the proxy's port (its first call picks the port).
func (p *Proxy) Start() {
	p.tb.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		return
	}
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.tb.Fatalf("proxy: listen on %s: %v", p.addr, err)
	}
	p.ln, p.addr = ln, ln.Addr().String()
	go p.accept(ln)
}

func (p *Proxy) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go p.pipe(c)
	}
}

func (p *Proxy) pipe(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.ln == nil { // stopped while dialling
		p.mu.Unlock()
		c.Close()
		up.Close()
		return
	}
	p.conns[c], p.conns[up] = true, true
	p.mu.Unlock()
	go func() { _, _ = io.Copy(up, forwardUnlessHung{c, &p.hung}); up.Close() }()
	_, _ = io.Copy(c, up)
	c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

// Hang makes the service look hung while on: connections and requests are
// accepted and never answered (what clients send is dropped).
func (p *Proxy) Hang(on bool) { p.hung.Store(on) }

// forwardUnlessHung reads from the client and drops what it read while hung.
type forwardUnlessHung struct {
	r    io.Reader
	hung *atomic.Bool
}

func (f forwardUnlessHung) Read(b []byte) (int, error) {
	for {
		n, err := f.r.Read(b)
		if n == 0 || !f.hung.Load() {
			return n, err
		}
		if err != nil {
			return 0, err
		}
	}
}

// Stop closes the port and every connection through it: connects are refused
// until Start.
func (p *Proxy) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}
