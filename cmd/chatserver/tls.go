package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/chatterm/chat/server/node"
)

// certPoll is how often the certificate files are checked for a change. A
// renewal is days ahead of expiry, so seconds of delay cost nothing; a stat of
// two files every few seconds costs nothing either.
const certPoll = 5 * time.Second

// tlsSetup is where chatserver's certificate comes from: files (--tls-cert,
// --tls-key), reloaded on SIGHUP and when they change, or ACME (acme.go).
// With neither it serves plain HTTP, for a proxy that terminates TLS.
type tlsSetup struct {
	certPath, keyPath string
	acme              acmeSetup
	pollEvery         time.Duration // 0: certPoll; tests shorten it

	cert      *node.CertFile
	hup       chan os.Signal
	stopWatch context.CancelFunc
	watching  sync.WaitGroup
}

func (t *tlsSetup) flags() []envFlag {
	return []envFlag{
		{"tls-cert", "CHATSERVER_TLS_CERT", "serve HTTPS on --addr with this PEM certificate file (the chain, leaf first); read again on SIGHUP and when the file changes; needs --tls-key", setString(&t.certPath), ""},
		{"tls-key", "CHATSERVER_TLS_KEY", "the PEM private key of --tls-cert", setString(&t.keyPath), ""},
		{"acme-domain", "CHATSERVER_ACME_DOMAIN", "serve HTTPS on --addr with certificates from Let's Encrypt (ACME) for this domain, cached in <data-dir>/acme; repeat or comma-separate for several", appendList(&t.acme.domains), ""},
		{"acme-email", "CHATSERVER_ACME_EMAIL", "with --acme-domain: contact address for the ACME account (expiry and policy notices)", setString(&t.acme.email), ""},
		{"acme-http-addr", "CHATSERVER_ACME_HTTP_ADDR", "with --acme-domain: plain-HTTP listener answering ACME http-01 challenges and redirecting everything else to https (empty: none)", setString(&t.acme.httpAddr), ":80"},
	}
}

// check refuses contradictory flags and a pair that does not load, so that
// both are flag errors (exit 2) rather than a server that starts and fails.
func (t *tlsSetup) check() error {
	switch {
	case len(t.acme.domains) > 0 && (t.certPath != "" || t.keyPath != ""):
		return errors.New("--acme-domain and --tls-cert/--tls-key are two ways to get a certificate: give one")
	case t.certPath != "" && t.keyPath == "":
		return errors.New("--tls-cert needs --tls-key")
	case t.keyPath != "" && t.certPath == "":
		return errors.New("--tls-key needs --tls-cert")
	}
	if t.certPath != "" {
		if _, err := tls.LoadX509KeyPair(t.certPath, t.keyPath); err != nil {
			return fmt.Errorf("--tls-cert %s with --tls-key %s: %w", t.certPath, t.keyPath, err)
		}
	}
	return t.acme.check()
}

// start sets cfg.TLS before the node starts: loads the pair and starts
// watching it, or sets up ACME and its plain-HTTP listener.
func (t *tlsSetup) start(cfg *node.Config, log *slog.Logger) error {
	if len(t.acme.domains) > 0 {
		return t.acme.start(cfg, log)
	}
	if t.certPath == "" {
		return nil
	}
	cert, err := node.LoadCertFile(t.certPath, t.keyPath, log)
	if err != nil {
		return err
	}
	t.cert = cert
	cfg.TLS = cert.TLSConfig()
	every := t.pollEvery
	if every <= 0 {
		every = certPoll
	}
	t.hup = make(chan os.Signal, 1)
	signal.Notify(t.hup, syscall.SIGHUP)
	ctx, stop := context.WithCancel(context.Background())
	t.stopWatch = stop
	t.watching.Go(func() { cert.Watch(ctx, every, t.hup) })
	return nil
}

// serve starts what runs beside the node once it listens on httpsAddr
// (ACME's listener).
func (t *tlsSetup) serve(httpsAddr, publicURL string, log *slog.Logger) {
	if len(t.acme.domains) > 0 {
		t.acme.serve(httpsAddr, publicURL, log)
	}
}

// close stops watching and ACME's listener; safe to call more than once.
func (t *tlsSetup) close() {
	if t.stopWatch != nil {
		t.stopWatch()
		t.watching.Wait()
		signal.Stop(t.hup)
		t.stopWatch = nil
	}
	t.acme.close()
}

func setString(p *string) func(string) error {
	return func(v string) error { *p = v; return nil }
}

// appendList adds comma-separated values, so the flag may be repeated.
func appendList(p *[]string) func(string) error {
	return func(v string) error {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				*p = append(*p, s)
			}
		}
		return nil
	}
}
