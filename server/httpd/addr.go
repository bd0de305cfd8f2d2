package httpd

import (
	"net"
	"net/http"
	"net/netip"
)

// clientAddr is the address the per-address limits count against: the TCP
// peer's IP, or its /64 for IPv6, as the listener counts (addrKey). (Behind a
// reverse proxy every client has the proxy's address; the limits then apply
// to the proxy as a whole; see docs/security.md.)
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	return ipKey(ip).String()
}
