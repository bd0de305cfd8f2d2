package client

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
)

// WithTLS returns c with an HTTPClient made from CAFile and Insecure: the
// default client's timeouts and proxy settings, trusting the system's roots
// plus CAFile's certificates, or with Insecure any certificate at all. The
// API and the WebSocket dials of sessions share it, so both trust the same.
// An HTTPClient already set, or neither option, leaves c as it is; a CA file
// that cannot be read or holds no certificate is an error.
func (c Config) WithTLS() (Config, error) {
	if c.HTTPClient != nil || (c.CAFile == "" && !c.Insecure) {
		return c, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.Insecure {
		tc.InsecureSkipVerify = true
	} else {
		pool, err := caPool(c.CAFile)
		if err != nil {
			return c, err
		}
		tc.RootCAs = pool
	}
	tr := defaultHTTPClient.Transport.(*http.Transport).Clone()
	tr.TLSClientConfig = tc
	c.HTTPClient = &http.Client{Transport: tr}
	return c, nil
}

// caPool is the system's roots plus the certificates in file: a private CA
// added, so a server on a public certificate still verifies too.
func caPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("CA file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool() // no system roots here: the file's alone
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("CA file %s holds no PEM certificate", file)
	}
	return pool, nil
}
