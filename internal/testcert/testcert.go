// Package testcert makes certificates for tests: a private certificate
// authority and leaf certificates it signs, as PEM files a server and a client
// read like real ones. Keys are ECDSA P-256: quick to make, so every test can
// have a CA of its own.
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a certificate authority of the test's own.
type CA struct {
	Cert *x509.Certificate
	PEM  []byte // the CA certificate, what a --ca-file holds
	key  *ecdsa.PrivateKey
}

// NewCA makes a CA valid from an hour ago for a year.
func NewCA(tb testing.TB) *CA {
	tb.Helper()
	key := newKey(tb)
	tmpl := &x509.Certificate{
		SerialNumber:          serial(tb),
		Subject:               pkix.Name{CommonName: "chat test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	return &CA{Cert: cert, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), key: key}
}

// WriteFile writes the CA certificate into dir and returns its path.
func (ca *CA) WriteFile(tb testing.TB, dir string) string {
	tb.Helper()
	path := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(path, ca.PEM, 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// Pool is a pool holding only this CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Leaf is a server certificate and its key.
type Leaf struct {
	Cert    *x509.Certificate
	CertPEM []byte
	KeyPEM  []byte // "EC PRIVATE KEY"
}

// Leaf makes a server certificate signed by the CA for hosts (IP addresses or
// DNS names), valid from an hour ago for a year, with a serial of its own.
func (ca *CA) Leaf(tb testing.TB, hosts ...string) *Leaf {
	tb.Helper()
	return makeLeaf(tb, ca.Cert, ca.key, hosts)
}

// SelfSigned makes a certificate for hosts that signs itself: trusted by no
// one, as a certificate from an unknown issuer would be.
func SelfSigned(tb testing.TB, hosts ...string) *Leaf {
	tb.Helper()
	return makeLeaf(tb, nil, nil, hosts)
}

func makeLeaf(tb testing.TB, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, hosts []string) *Leaf {
	key := newKey(tb)
	tmpl := &x509.Certificate{
		SerialNumber: serial(tb),
		Subject:      pkix.Name{CommonName: hosts[0]},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		tb.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		tb.Fatal(err)
	}
	return &Leaf{
		Cert:    cert,
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}),
	}
}

// TLS is the pair as a tls.Certificate.
func (l *Leaf) TLS(tb testing.TB) tls.Certificate {
	tb.Helper()
	c, err := tls.X509KeyPair(l.CertPEM, l.KeyPEM)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// WriteFiles writes the certificate and key to the two paths, each through a
// rename, as certificate tools do, so a reader never sees half a file.
func (l *Leaf) WriteFiles(tb testing.TB, certPath, keyPath string) {
	tb.Helper()
	WriteAtomic(tb, certPath, l.CertPEM)
	WriteAtomic(tb, keyPath, l.KeyPEM)
}

// WriteAtomic writes data to path through a temporary file and a rename.
func WriteAtomic(tb testing.TB, path string, data []byte) {
	tb.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		tb.Fatal(err)
	}
}

func newKey(tb testing.TB) *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	return key
}

func serial(tb testing.TB) *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64))
	if err != nil {
		tb.Fatal(err)
	}
	return n
}
