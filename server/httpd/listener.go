package httpd

import (
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// DefaultConnsPerAddr caps the TCP connections one client address holds at
// once (docs/security.md): above the WebSocket cap per address (256), so an
// office behind one NAT address keeps its sockets and its plain requests.
const DefaultConnsPerAddr = 512

// ConnLimits bound the TCP connections a listener hands to the HTTP server.
// Every connection counts, plain requests and WebSockets alike: the socket caps
// (Options) only count upgraded ones, and 20,000 idle keep-alive connections
// from two addresses used up the process's file descriptors without them.
type ConnLimits struct {
	// PerAddr caps the connections of one client address (IPv4, or the /64 of
	// an IPv6 address); 0: DefaultConnsPerAddr; <0: no cap.
	PerAddr int
	// Total caps the connections in all; ≤0: no cap. node sets it to the
	// open-file limit less the descriptors it keeps back for everything else.
	Total int
}

// Listen wraps ln so that a connection past a cap is closed as soon as it is
// accepted, before net/http gives it a goroutine or a buffer, and so that
// running out of file descriptors (EMFILE, ENFILE) is waited out with backoff
// and one log line rather than spun on.
func Listen(ln net.Listener, lim ConnLimits, log *slog.Logger) *Listener {
	if lim.PerAddr == 0 {
		lim.PerAddr = DefaultConnsPerAddr
	}
	return &Listener{Listener: ln, lim: lim, log: log, addrs: map[netip.Addr]int{}, closed: make(chan struct{})}
}

// Listener is a net.Listener that counts its connections per client address.
type Listener struct {
	net.Listener
	lim ConnLimits
	log *slog.Logger

	mu    sync.Mutex
	addrs map[netip.Addr]int
	live  int

	refused   atomic.Int64
	lastWarn  time.Time // of the last "out of file descriptors" line; Accept's goroutine only
	closeOnce sync.Once
	closed    chan struct{}
}

// Accept backoff while the process is out of file descriptors: short at first
// (a burst of connections closing frees some at once), never over a second.
const (
	minAcceptBackoff = 5 * time.Millisecond
	maxAcceptBackoff = time.Second
	warnEvery        = 10 * time.Second
)

// Accept returns the next connection within the caps.
func (l *Listener) Accept() (net.Conn, error) {
	var backoff time.Duration
	var failures int
	var warned bool
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if !outOfFiles(err) {
				return nil, err
			}
			// net/http would back off too, but log every failure (77 lines in
			// one attack); here one line says it started and one that it is
			// over, at most one pair in warnEvery however often the shortage
			// comes and goes.
			if failures == 0 && time.Since(l.lastWarn) >= warnEvery {
				l.log.Warn("out of file descriptors: new connections wait until some close; raise ulimit -n or lower --max-conns", "err", err)
				l.lastWarn, warned = time.Now(), true
			}
			failures++
			backoff = min(max(2*backoff, minAcceptBackoff), maxAcceptBackoff)
			t := time.NewTimer(backoff)
			select {
			case <-t.C:
			case <-l.closed:
				t.Stop()
				return nil, net.ErrClosed
			}
			continue
		}
		if failures > 0 {
			if warned {
				l.log.Info("accepting connections again", "failed_accepts", failures)
			}
			failures, backoff, warned = 0, 0, false
		}
		key := addrKey(c.RemoteAddr())
		if !l.admit(key) {
			// Closed at once: it costs the descriptor for a moment and no
			// goroutine. A TLS listener sits on top of this one, so no HTTP
			// answer can be written here.
			l.refused.Add(1)
			c.Close()
			continue
		}
		return &countedConn{Conn: c, l: l, key: key}, nil
	}
}

// Close stops Accept, also while it waits out a shortage of descriptors.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// Refused is the number of connections closed at accept for a cap.
func (l *Listener) Refused() int64 { return l.refused.Load() }

// Conns is the number of connections open.
func (l *Listener) Conns() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.live
}

func (l *Listener) admit(key netip.Addr) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lim.Total > 0 && l.live >= l.lim.Total {
		return false
	}
	if l.lim.PerAddr > 0 && l.addrs[key] >= l.lim.PerAddr {
		return false
	}
	l.addrs[key]++
	l.live++
	return true
}

func (l *Listener) release(key netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.addrs[key]--; l.addrs[key] <= 0 {
		delete(l.addrs, key)
	}
	l.live--
}

// countedConn gives its place back when closed, once: net/http closes a
// connection once, but a hijacked one may be closed by both the WebSocket
// library and our shutdown.
type countedConn struct {
	net.Conn
	l    *Listener
	key  netip.Addr
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.l.release(c.key) })
	return c.Conn.Close()
}

// outOfFiles reports an accept that failed for want of file descriptors.
func outOfFiles(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// addrKey is what the per-address limits count against: the IPv4 address, or
// the /64 an IPv6 address is in (one host commonly holds a whole /64, so its
// single addresses would be as many free passes).
func addrKey(a net.Addr) netip.Addr {
	var ip netip.Addr
	switch a := a.(type) {
	case *net.TCPAddr:
		ip, _ = netip.AddrFromSlice(a.IP)
	default:
		ap, err := netip.ParseAddrPort(a.String())
		if err != nil {
			return netip.Addr{}
		}
		ip = ap.Addr()
	}
	return ipKey(ip)
}

func ipKey(ip netip.Addr) netip.Addr {
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.Addr()
	}
	return ip
}
