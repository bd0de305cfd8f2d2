package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/crypto/acme/autocert"

	"github.com/chatterm/chat/server/node"
)

// acmeSetup gets certificates from an ACME CA (Let's Encrypt) for the
// --acme-domain names: autocert answers the TLS-ALPN challenge on --addr and
// the http-01 one on --acme-http-addr, caches what it gets under
// <data-dir>/acme and renews it ahead of expiry.
type acmeSetup struct {
	domains  []string
	email    string
	httpAddr string

	manager *autocert.Manager
	ln      net.Listener // on httpAddr; nil when empty
	srv     *http.Server
}

// check normalises the names and refuses what no CA issues for: an IP
// address, a URL, a port, a wildcard (autocert cannot answer DNS challenges),
// a name without a dot.
func (a *acmeSetup) check() error {
	if len(a.domains) == 0 {
		if a.email != "" {
			return errors.New("--acme-email needs --acme-domain")
		}
		return nil
	}
	for i, d := range a.domains {
		d = strings.TrimSuffix(strings.ToLower(d), ".")
		switch {
		case net.ParseIP(d) != nil:
			return fmt.Errorf("--acme-domain %s: an IP address; ACME certificates here are for domain names", d)
		case strings.ContainsAny(d, ":/*@ "):
			return fmt.Errorf("--acme-domain %q: give the bare domain name, like chat.example.com", d)
		case !strings.Contains(d, "."):
			return fmt.Errorf("--acme-domain %q: not a public domain name", d)
		}
		a.domains[i] = d
	}
	return nil
}

// newManager is the autocert manager for the domains, its cache in dataDir.
func (a *acmeSetup) newManager(dataDir string) *autocert.Manager {
	return &autocert.Manager{
		Prompt: autocert.AcceptTOS,
		// The account key and the certificates: kept across restarts, so a
		// restart does not ask the CA again (its rate limits are per week).
		Cache:      autocert.DirCache(filepath.Join(dataDir, "acme")),
		HostPolicy: autocert.HostWhitelist(a.domains...),
		Email:      a.email,
	}
}

// start configures the node for ACME and opens the plain-HTTP listener, so a
// port already taken fails the start before anything serves.
func (a *acmeSetup) start(cfg *node.Config, log *slog.Logger) error {
	dataDir := cfg.DataDir
	if dataDir == "" {
		dataDir = "data"
	}
	a.manager = a.newManager(dataDir)
	cfg.TLS = a.manager.TLSConfig()
	if cfg.PublicURL == "" {
		// The listening address's IP is not in the certificate: clients and
		// media links must use the name.
		cfg.PublicURL = "https://" + a.domains[0] + portSuffix(cfg.Addr)
	}
	if a.httpAddr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", a.httpAddr)
	if err != nil {
		return fmt.Errorf("listen for ACME http-01 challenges on %s (--acme-http-addr; empty turns it off): %w", a.httpAddr, err)
	}
	a.ln = ln
	return nil
}

// serve answers challenges and redirects on the plain-HTTP listener, once
// the node listens on httpsAddr.
func (a *acmeSetup) serve(httpsAddr, publicURL string, log *slog.Logger) {
	log.Info("ACME certificates", "domains", strings.Join(a.domains, ","), "cache", a.manager.Cache, "public_url", publicURL)
	if a.ln == nil {
		return
	}
	port := httpsPort(publicURL, httpsAddr)
	a.srv = &http.Server{
		Handler:           a.manager.HTTPHandler(redirectToHTTPS(port)),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	go a.srv.Serve(a.ln)
	log.Info("answering ACME http-01 challenges and redirecting to https", "addr", a.ln.Addr().String())
}

func (a *acmeSetup) close() {
	if a.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if a.srv.Shutdown(ctx) != nil {
			a.srv.Close()
		}
		a.srv = nil
	}
	if a.ln != nil {
		a.ln.Close() // when serve never ran
		a.ln = nil
	}
}

// redirectToHTTPS sends every request to the same host and path over https,
// on port ("" for 443). 308 keeps the method and body of an API call; a
// request without a Host has nowhere to go.
func redirectToHTTPS(port string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if host == "" {
			http.Error(w, "use https", http.StatusBadRequest)
			return
		}
		if strings.Contains(host, ":") { // an IPv6 literal
			host = "[" + host + "]"
		}
		if port != "" {
			host += ":" + port
		}
		code := http.StatusPermanentRedirect
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			code = http.StatusMovedPermanently
		}
		http.Redirect(w, r, "https://"+host+r.URL.RequestURI(), code)
	})
}

// httpsPort is the port redirects point at: the public URL's when it is
// https (a port forwarded from 443 to --addr is common), else the one
// listened on; "" for 443.
func httpsPort(publicURL, listenAddr string) string {
	port := ""
	if u, err := url.Parse(publicURL); err == nil && u.Scheme == "https" {
		port = u.Port()
	} else if _, p, err := net.SplitHostPort(listenAddr); err == nil {
		port = p
	}
	if port == "443" {
		return ""
	}
	return port
}

// portSuffix is ":PORT" for an address not on 443, for a URL.
func portSuffix(addr string) string {
	_, port, err := net.SplitHostPort(addr)
	if err != nil || port == "443" || port == "" || port == "0" {
		return ""
	}
	return ":" + port
}
