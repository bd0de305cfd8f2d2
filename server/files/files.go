// Package files is the embedded BlobStore: objects are files under a directory,
// and presigned URLs are HMAC-signed paths under a base URL that this package's
// Handler serves. It is the one-machine stand-in for S3 (server/s3).
//
// An object key is a slash-separated relative path ("media/ann/1f3a.png"); keys
// with empty, "." or ".." segments are refused, and every file is opened through
// an os.Root, so no key reaches outside the directory. Object bytes live under
// <dir>/objects/<key> and their content type under <dir>/types/<key>.
package files

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/chatterm/chat/server"
)

var _ server.BlobStore = (*Store)(nil)

// DefaultMaxSize is the largest object Handler accepts by default.
const DefaultMaxSize = 32 << 20

// Options configure a Store.
type Options struct {
	// BaseURL is where Handler is mounted, as clients reach it, e.g.
	// "http://chat.example.com/v1/blobs/". Presigned URLs are BaseURL + key.
	BaseURL string
	// Secret signs presigned URLs. Empty: a random secret kept in <dir>/secret,
	// so URLs stay valid across restarts.
	Secret []byte
	// MaxSize limits objects uploaded through Handler (0: DefaultMaxSize).
	MaxSize int64
	// Now is the clock for expiry (nil: time.Now).
	Now func() time.Time
}

// Store is a BlobStore on files under a directory.
type Store struct {
	root    *os.Root
	base    string
	secret  []byte
	maxSize int64
	now     func() time.Time
}

// Open opens (creating it if needed) the blob directory dir.
func Open(dir string, o Options) (*Store, error) {
	if o.BaseURL == "" {
		return nil, errors.New("files: BaseURL is required (where Handler is mounted)")
	}
	if _, err := url.Parse(o.BaseURL); err != nil {
		return nil, fmt.Errorf("files: base URL: %w", err)
	}
	// Private: media are sent to conversations, not to the machine's other
	// users.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("files: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("files: %w", err)
	}
	s := &Store{root: root, base: o.BaseURL, secret: o.Secret, maxSize: o.MaxSize, now: o.Now}
	if !strings.HasSuffix(s.base, "/") {
		s.base += "/"
	}
	if s.maxSize <= 0 {
		s.maxSize = DefaultMaxSize
	}
	if s.now == nil {
		s.now = time.Now
	}
	if len(s.secret) == 0 {
		if s.secret, err = loadSecret(root); err != nil {
			root.Close()
			return nil, err
		}
	}
	return s, nil
}

// Close releases the directory.
func (s *Store) Close() error { return s.root.Close() }

func loadSecret(root *os.Root) ([]byte, error) {
	b, err := root.ReadFile("secret")
	if err == nil && len(b) >= 32 {
		return b, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("files: read secret: %w", err)
	}
	b = make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("files: new secret: %w", err)
	}
	if err := root.WriteFile("secret", b, 0o600); err != nil {
		return nil, fmt.Errorf("files: write secret: %w", err)
	}
	return b, nil
}

// ErrBadKey is returned for a key that is not a clean relative path.
var ErrBadKey = errors.New("files: bad object key")

// CheckKey reports whether key is a clean slash-separated relative path.
func CheckKey(key string) error {
	if key == "" || len(key) > 1024 || strings.ContainsAny(key, "\\\x00") || path.Clean(key) != key ||
		strings.HasPrefix(key, "/") || key == "." || key == ".." || strings.HasPrefix(key, "../") {
		return fmt.Errorf("%w %q", ErrBadKey, key)
	}
	return nil
}

// Put stores data under key, replacing any object there. The write goes to a
// temporary file renamed into place, so a reader sees the old or the new object,
// never half of one.
func (s *Store) Put(_ context.Context, key string, data []byte, contentType string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if err := s.writeFile("types/"+key, []byte(contentType)); err != nil {
		return err
	}
	return s.writeFile("objects/"+key, data)
}

func (s *Store) writeFile(name string, data []byte) error {
	if err := s.root.MkdirAll(path.Dir(name), 0o700); err != nil {
		return fmt.Errorf("files: put %s: %w", name, err)
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := name + ".tmp-" + hex.EncodeToString(rnd[:])
	f, err := s.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("files: put %s: %w", name, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = s.root.Rename(tmp, name)
	}
	if err != nil {
		_ = s.root.Remove(tmp)
		return fmt.Errorf("files: put %s: %w", name, err)
	}
	return nil
}

// Delete removes the object and its content type; a missing one is no error.
func (s *Store) Delete(_ context.Context, key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	for _, name := range []string{"objects/" + key, "types/" + key} {
		if err := s.root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("files: delete %s: %w", key, err)
		}
	}
	return nil
}

// Get returns the object's bytes, or server.ErrNotFound.
func (s *Store) Get(_ context.Context, key string) ([]byte, error) {
	data, _, err := s.read(key)
	return data, err
}

func (s *Store) read(key string) (data []byte, contentType string, err error) {
	if err := CheckKey(key); err != nil {
		return nil, "", err
	}
	data, err = s.root.ReadFile("objects/" + key)
	if errors.Is(err, fs.ErrNotExist) || isDirErr(err) {
		return nil, "", fmt.Errorf("files: get %s: %w", key, server.ErrNotFound)
	}
	if err != nil {
		return nil, "", fmt.Errorf("files: get %s: %w", key, err)
	}
	ct, _ := s.root.ReadFile("types/" + key)
	return data, string(ct), nil
}

// isDirErr: reading a "key" that is a directory of other keys is a miss.
func isDirErr(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "is a directory")
}

// PresignPut returns a URL accepting one PUT of exactly size bytes to key with
// Content-Type contentType until ttl from now.
func (s *Store) PresignPut(_ context.Context, key, contentType string, size int64, ttl time.Duration) (string, error) {
	if size < 0 || size > s.maxSize {
		return "", fmt.Errorf("files: presign %s: size %d not in [0, %d]", key, size, s.maxSize)
	}
	return s.presign("PUT", key, contentType, size, ttl)
}

// PresignGet returns a URL serving key until ttl from now.
func (s *Store) PresignGet(_ context.Context, key string, ttl time.Duration) (string, error) {
	return s.presign("GET", key, "", -1, ttl)
}

// presign signs a URL; size < 0 (a GET) leaves it out.
func (s *Store) presign(method, key, contentType string, size int64, ttl time.Duration) (string, error) {
	if err := CheckKey(key); err != nil {
		return "", err
	}
	if ttl <= 0 {
		return "", fmt.Errorf("files: presign %s: ttl %v must be positive", key, ttl)
	}
	exp := s.now().Add(ttl).Unix()
	q := url.Values{"exp": {strconv.FormatInt(exp, 10)}, "sig": {s.sign(method, key, contentType, size, exp)}}
	if size >= 0 {
		q.Set("size", strconv.FormatInt(size, 10))
	}
	return s.base + escapeKey(key) + "?" + q.Encode(), nil
}

// escapeKey escapes each segment, keeping the slashes.
func escapeKey(key string) string {
	segs := strings.Split(key, "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	return strings.Join(segs, "/")
}

// sign is the HMAC of everything the URL grants: the method (a GET URL cannot
// upload), the key, the content type and size of a PUT and the expiry. A GET
// (size < 0) is signed as before sizes were, so its URLs stay valid.
func (s *Store) sign(method, key, contentType string, size, exp int64) string {
	m := hmac.New(sha256.New, s.secret)
	fmt.Fprintf(m, "%s\n%s\n%s\n%d", method, key, contentType, exp)
	if size >= 0 {
		fmt.Fprintf(m, "\n%d", size)
	}
	return hex.EncodeToString(m.Sum(nil))
}

// Errors of Verify.
var (
	ErrExpired = errors.New("files: presigned URL expired")
	ErrBadSig  = errors.New("files: presigned URL signature does not match")
)

// Verify checks a presigned request: method and key as requested, exp, size
// and sig from the URL's query, contentType the request's Content-Type for a
// PUT ("" for GET). It returns the size a PUT URL was signed for (-1 for a GET).
func (s *Store) Verify(method, key, contentType, exp, size, sig string) (int64, error) {
	e, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: exp %q", ErrBadSig, exp)
	}
	if method == "HEAD" {
		method = "GET"
	}
	n := int64(-1)
	if method == "PUT" {
		if n, err = strconv.ParseInt(size, 10, 64); err != nil || n < 0 {
			return 0, fmt.Errorf("%w: size %q", ErrBadSig, size)
		}
	}
	if !hmac.Equal([]byte(sig), []byte(s.sign(method, key, contentType, n, e))) {
		return 0, ErrBadSig
	}
	if s.now().Unix() >= e {
		return 0, ErrExpired
	}
	return n, nil
}
