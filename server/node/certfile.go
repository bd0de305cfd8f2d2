package node

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// CertFile is a certificate and key read from PEM files and read again when
// asked (SIGHUP) or when the files change (a renewal by certbot or the like).
// Its GetCertificate goes into a tls.Config: every handshake takes the pair
// current at that moment, so a reload never touches connections already up.
// A reload that fails keeps the pair that works.
type CertFile struct {
	certPath, keyPath string
	log               *slog.Logger

	cur atomic.Pointer[tls.Certificate]

	mu   sync.Mutex // one load at a time
	seen stamp      // the files as they were at the last load tried
}

// stamp tells whether the files changed since a load: mtime and size of each.
type stamp struct {
	certMod, keyMod   time.Time
	certSize, keySize int64
}

// LoadCertFile reads the pair; an unreadable or mismatched pair is an error.
func LoadCertFile(certPath, keyPath string, log *slog.Logger) (*CertFile, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &CertFile{certPath: certPath, keyPath: keyPath, log: log}
	c.seen = c.stat()
	pair, err := c.load()
	if err != nil {
		return nil, err
	}
	c.cur.Store(pair)
	return c, nil
}

// GetCertificate is tls.Config.GetCertificate: the current pair.
func (c *CertFile) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return c.cur.Load(), nil
}

// TLSConfig is a server configuration serving the current pair.
func (c *CertFile) TLSConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: c.GetCertificate}
}

// Current is the pair served now.
func (c *CertFile) Current() *tls.Certificate { return c.cur.Load() }

// Reload reads the files again. On failure the current pair stays and the
// log gets one line saying why.
func (c *CertFile) Reload() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen = c.stat()
	return c.reloadLocked()
}

// ReloadIfChanged reloads when either file's mtime or size moved since the
// last load tried. A pair that failed is not tried again until a file changes
// once more, so a broken renewal logs once, not once per poll.
func (c *CertFile) ReloadIfChanged() {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.stat()
	if now.same(c.seen) {
		return
	}
	c.seen = now
	_ = c.reloadLocked()
}

// Watch reloads on every value from hup and polls the files every interval
// (ReloadIfChanged) until ctx ends. Polling rather than inotify: no
// dependency, and it sees a file replaced through a rename or a symlink
// swapped (certbot's live/ directory), which watches on the old inode miss.
func (c *CertFile) Watch(ctx context.Context, every time.Duration, hup <-chan os.Signal) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			_ = c.Reload()
		case <-t.C:
			c.ReloadIfChanged()
		}
	}
}

func (c *CertFile) reloadLocked() error {
	pair, err := c.load()
	if err != nil {
		c.log.Warn("tls certificate not reloaded; still serving the previous one", "err", err)
		return err
	}
	c.cur.Store(pair)
	c.log.Info("tls certificate reloaded", "cert", c.certPath, "serial", fmt.Sprintf("%X", pair.Leaf.SerialNumber),
		"not_after", pair.Leaf.NotAfter.UTC().Format(time.RFC3339))
	return nil
}

func (c *CertFile) load() (*tls.Certificate, error) {
	pair, err := tls.LoadX509KeyPair(c.certPath, c.keyPath)
	if err != nil {
		return nil, fmt.Errorf("tls certificate %s with key %s: %w", c.certPath, c.keyPath, err)
	}
	// LoadX509KeyPair fills Leaf; the logs read it.
	if pair.Leaf == nil {
		return nil, fmt.Errorf("tls certificate %s: no leaf certificate", c.certPath)
	}
	if time.Now().After(pair.Leaf.NotAfter) {
		c.log.Warn("tls certificate has expired; clients will refuse it", "cert", c.certPath,
			"not_after", pair.Leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	return &pair, nil
}

func (s stamp) same(o stamp) bool {
	return s.certMod.Equal(o.certMod) && s.keyMod.Equal(o.keyMod) && s.certSize == o.certSize && s.keySize == o.keySize
}

func (c *CertFile) stat() stamp {
	var s stamp
	// Stat follows symlinks: a swapped link counts as a change.
	if fi, err := os.Stat(c.certPath); err == nil {
		s.certMod, s.certSize = fi.ModTime(), fi.Size()
	}
	if fi, err := os.Stat(c.keyPath); err == nil {
		s.keyMod, s.keySize = fi.ModTime(), fi.Size()
	}
	return s
}
