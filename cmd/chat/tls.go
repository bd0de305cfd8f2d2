package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"strconv"

	"github.com/chatterm/chat/client"
)

// tlsOptions say how chat checks the server's certificate: --ca-file and
// --insecure, over CHAT_CA_FILE and CHAT_INSECURE. The client is built as soon
// as they are known, so a CA file that does not load is a usage error at the
// flag, not a network error at the first request.
type tlsOptions struct {
	caFile   string
	insecure bool
	hc       *http.Client // nil: the client package's default
	warned   bool
}

// tlsFlags adds --ca-file and --insecure to fs (before the command, or among
// its flags, like --server).
func (a *app) tlsFlags(fs *flag.FlagSet) {
	fs.Func("ca-file", "trust the CA certificates in PEM `FILE` besides the system's (CHAT_CA_FILE)", func(v string) error {
		a.tls.caFile = v
		return a.buildTLS()
	})
	fs.BoolFunc("insecure", "do not verify the server's certificate (CHAT_INSECURE=1): testing only", func(v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return err
		}
		a.tls.insecure = b
		return a.buildTLS()
	})
}

// tlsFromEnv takes CHAT_CA_FILE and CHAT_INSECURE; flags parsed later win.
func (a *app) tlsFromEnv() error {
	a.tls.caFile = a.getenv("CHAT_CA_FILE")
	if v := a.getenv("CHAT_INSECURE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return usagef("CHAT_INSECURE=%q: give 1 or 0", v)
		}
		a.tls.insecure = b
	}
	return nil
}

// buildTLS makes the HTTP client the options ask for. Its error is a flag's:
// the caller makes it a usage error.
func (a *app) buildTLS() error {
	cfg, err := client.Config{CAFile: a.tls.caFile, Insecure: a.tls.insecure}.WithTLS()
	if err != nil {
		return err
	}
	a.tls.hc = cfg.HTTPClient
	return nil
}

// applyTLS puts the client into cfg, and says once on stderr that nothing is
// verified when --insecure is on: a warning the user cannot miss, since the
// password and every message are open to whoever sits on the path.
func (a *app) applyTLS(cfg *client.Config) {
	cfg.CAFile, cfg.Insecure, cfg.HTTPClient = a.tls.caFile, a.tls.insecure, a.tls.hc
	if a.tls.insecure && !a.tls.warned {
		a.tls.warned = true
		fmt.Fprintln(a.stderr, "chat: warning: --insecure: the server's certificate is not verified; anyone on the network path can read and change this session")
	}
}

// certHint explains a server certificate that was not accepted, which the
// network hint ("is the server running?") would send the user away from.
func certHint(err error) (string, bool) {
	var ve *tls.CertificateVerificationError
	if !errors.As(err, &ve) {
		return "", false
	}
	var ua x509.UnknownAuthorityError
	if errors.As(err, &ua) {
		return err.Error() + ": the server's certificate is signed by a CA this machine does not trust; pass that CA's certificate with --ca-file FILE (or CHAT_CA_FILE)", true
	}
	return err.Error() + ": the server's certificate does not fit (its name or dates); check --server and the certificate", true
}
