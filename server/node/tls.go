package node

import "crypto/tls"

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
	n.srv.TLSConfig = hardenTLS(n.cfg.TLS)
	return n.srv.ServeTLS(n.ln, "", "")
}

// aeadSuites are the TLS 1.2 suites served: forward secrecy (ECDHE) and an
// AEAD cipher only. Go's defaults still offer the CBC suites with SHA-1 MACs
// (ECDHE-*-AES-*-CBC-SHA), which are open to padding-oracle and Lucky13-style
// attacks; every client that speaks TLS 1.2 has a GCM or ChaCha20 suite. TLS
// 1.3's suites are not configurable and are all AEAD.
var aeadSuites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

// hardenTLS is a copy of c (the server adds its protocols to NextProtos, and
// the caller's config may serve elsewhere too) that speaks TLS 1.2 or later
// with aeadSuites only, whatever c asked for.
func hardenTLS(c *tls.Config) *tls.Config {
	c = c.Clone()
	c.MinVersion = max(c.MinVersion, tls.VersionTLS12)
	c.CipherSuites = aeadSuites
	return c
}
