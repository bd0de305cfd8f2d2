package node

// scheme is what clients put in front of the node's address.
func (n *Node) scheme() string {
	if n.cfg.TLS != nil {
		return "https"
	}
	return "http"
}

// serve runs the API server on the listener until it is closed: HTTPS when
// Config.TLS is set. ServeTLS rather than a tls.NewListener of our own: it
// also offers HTTP/2 to API clients (WebSocket dials ask for HTTP/1.1, which
// it keeps offering).
func (n *Node) serve() error {
	if n.cfg.TLS == nil {
		return n.srv.Serve(n.ln)
	}
	// A copy: the server adds its protocols to NextProtos, and the caller's
	// config may serve elsewhere too.
	n.srv.TLSConfig = n.cfg.TLS.Clone()
	return n.srv.ServeTLS(n.ln, "", "")
}
