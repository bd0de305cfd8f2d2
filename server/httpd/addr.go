package httpd

import (
	"net"
	"net/http"
)

// clientAddr is the address the per-address limits count against: the TCP
// peer's IP. (Behind a reverse proxy every client has the proxy's address; the
// limits then apply to the proxy as a whole; see docs/security.md.)
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
