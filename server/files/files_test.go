package files_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/files"
	"github.com/chatterm/chat/server/roletest"
)

// open starts a Store behind its Handler, mounted as the lead's server does.
func open(t *testing.T, o files.Options) (*files.Store, string) {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	if o.BaseURL == "" {
		o.BaseURL = srv.URL + "/v1/blobs/"
	}
	s, err := files.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	mux.Handle("/v1/blobs/", http.StripPrefix("/v1/blobs/", s.Handler()))
	return s, dir
}

func TestBlobStore(t *testing.T) {
	roletest.BlobStore(t, func(t *testing.T) server.BlobStore {
		s, _ := open(t, files.Options{})
		return s
	})
}

func do(t *testing.T, method, u, contentType string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestPresignedRefused(t *testing.T) {
	var now time.Time = time.Now()
	s, _ := open(t, files.Options{Now: func() time.Time { return now }, MaxSize: 10})
	ctx := t.Context()
	if err := s.Put(ctx, "k", []byte("secret"), "text/plain"); err != nil {
		t.Fatal(err)
	}
	getURL, _ := s.PresignGet(ctx, "k", time.Minute)
	putURL, _ := s.PresignPut(ctx, "k", "text/plain", 1, time.Minute)

	for _, tc := range []struct {
		name, method, url, ct string
		body                  []byte
		want                  int
	}{
		{"ErrTamperedSig", "GET", strings.Replace(getURL, "sig=", "sig=0", 1), "", nil, 403},
		{"ErrOtherKey", "GET", strings.Replace(getURL, "/k?", "/j?", 1), "", nil, 403},
		{"ErrGetURLForPut", "PUT", getURL, "text/plain", []byte("x"), 403},
		{"ErrOtherContentType", "PUT", putURL, "text/html", []byte("x"), 403},
		{"ErrNoSig", "GET", strings.Split(getURL, "?")[0], "", nil, 403},
		{"ErrTooLarge", "PUT", putURL, "text/plain", []byte("more than ten bytes"), 413},
		{"ErrLongerThanSigned", "PUT", putURL, "text/plain", []byte("xy"), 413},
		{"ErrShorterThanSigned", "PUT", putURL, "text/plain", nil, 400},
		{"ErrOtherSize", "PUT", strings.Replace(putURL, "size=1", "size=5", 1), "text/plain", []byte("xxxxx"), 403},
		{"ErrTraversal", "GET", strings.Replace(getURL, "/k?", "/a/..%2f..%2fsecret?", 1), "", nil, 400},
		{"ErrMethod", "DELETE", getURL, "", nil, 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code, body := do(t, tc.method, tc.url, tc.ct, tc.body); code != tc.want {
				t.Fatalf("%s %s: %d %s; want %d", tc.method, tc.url, code, body, tc.want)
			}
			// Nothing changed.
			if got, err := s.Get(ctx, "k"); err != nil || string(got) != "secret" {
				t.Fatalf("object now %q, %v", got, err)
			}
		})
	}
	t.Run("ErrExpired", func(t *testing.T) {
		now = now.Add(time.Minute)
		if code, body := do(t, "GET", getURL, "", nil); code != 403 || !strings.Contains(body, "expired") {
			t.Fatalf("GET after expiry: %d %s", code, body)
		}
	})
}

func TestBadKeys(t *testing.T) {
	s, dir := open(t, files.Options{})
	ctx := t.Context()
	for _, key := range []string{"", "/abs", "../up", "a/../../up", "a//b", "a/./b", "a/", ".", "..", `a\b`, "a\x00b"} {
		if err := s.Put(ctx, key, []byte("x"), ""); !errors.Is(err, files.ErrBadKey) {
			t.Errorf("Put(%q) = %v, want ErrBadKey", key, err)
		}
		if _, err := s.Get(ctx, key); !errors.Is(err, files.ErrBadKey) {
			t.Errorf("Get(%q) = %v, want ErrBadKey", key, err)
		}
		if _, err := s.PresignGet(ctx, key, time.Minute); !errors.Is(err, files.ErrBadKey) {
			t.Errorf("PresignGet(%q) = %v, want ErrBadKey", key, err)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "up")); err == nil {
		t.Fatal("a file was written outside the directory")
	}
	// A key that is a "directory" of other keys is not an object.
	if err := s.Put(ctx, "d/x", []byte("x"), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "d"); !errors.Is(err, server.ErrNotFound) {
		t.Fatalf("Get(d) = %v, want ErrNotFound", err)
	}
}

func TestSecretSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	o := files.Options{BaseURL: "http://x/b/"}
	s1, err := files.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := s1.PresignGet(t.Context(), "k", time.Hour)
	s1.Close()
	s2, err := files.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	q := strings.Split(u, "?")[1]
	exp := strings.TrimPrefix(strings.Split(q, "&")[0], "exp=")
	sig := strings.TrimPrefix(strings.Split(q, "&")[1], "sig=")
	if _, err := s2.Verify("GET", "k", "", exp, "", sig); err != nil {
		t.Fatalf("URL signed before a restart: %v", err)
	}
	if _, err := files.Open(t.TempDir(), files.Options{}); err == nil {
		t.Fatal("Open without BaseURL succeeded")
	}
}
