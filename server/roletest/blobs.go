package roletest

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
)

// BlobStore checks a server.BlobStore, including that its presigned URLs work
// with a plain HTTP client. Expiry and tampering are the implementation's own
// tests (S3 test servers do not check signatures).
func BlobStore(t *testing.T, newStore func(t *testing.T) server.BlobStore) {
	get := func(t *testing.T, b server.BlobStore, key string, want []byte) {
		t.Helper()
		got, err := b.Get(ctx(t), key)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("Get(%s) = %q, %v; want %q", key, got, err, want)
		}
	}
	t.Run("OK", func(t *testing.T) {
		b, c := newStore(t), ctx(t)
		key := "media/" + id(t, "x") + "/photo.png"
		data := []byte{0, 1, 2, 0xff, 'p', 'n', 'g'}
		if err := b.Put(c, key, data, "image/png"); err != nil {
			t.Fatal(err)
		}
		get(t, b, key, data)
		if err := b.Put(c, key, []byte("second"), "text/plain"); err != nil {
			t.Fatal(err)
		}
		get(t, b, key, []byte("second"))
		empty := "cold/" + id(t, "empty")
		if err := b.Put(c, empty, nil, "application/json"); err != nil {
			t.Fatal(err)
		}
		get(t, b, empty, []byte{})
	})
	t.Run("Delete", func(t *testing.T) {
		b, c := newStore(t), ctx(t)
		key := "cold/" + id(t, "gone") + "/7.json"
		if err := b.Put(c, key, []byte("secret"), "application/json"); err != nil {
			t.Fatal(err)
		}
		get(t, b, key, []byte("secret"))
		for range 2 { // the second finds nothing, and that is no error
			if err := b.Delete(c, key); err != nil {
				t.Fatalf("Delete: %v", err)
			}
		}
		if got, err := b.Get(c, key); !errors.Is(err, server.ErrNotFound) {
			t.Fatalf("Get after Delete = %q, %v; want ErrNotFound", got, err)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		b, c := newStore(t), ctx(t)
		if got, err := b.Get(c, "nothing/"+id(t, "here")); !errors.Is(err, server.ErrNotFound) {
			t.Fatalf("Get of a missing key = %q, %v; want ErrNotFound", got, err)
		}
	})
	t.Run("Presigned", func(t *testing.T) {
		b, c := newStore(t), ctx(t)
		key := "media/" + id(t, "up") + "/a b.txt" // a space, escaped in the URL
		data := []byte("uploaded through a presigned URL")
		putURL, err := b.PresignPut(c, key, "text/plain", int64(len(data)), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequestWithContext(c, http.MethodPut, putURL, bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "text/plain")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("PUT %s: %s %s", putURL, resp.Status, body)
		}
		get(t, b, key, data)

		getURL, err := b.PresignGet(c, key, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		req, err = http.NewRequestWithContext(c, http.MethodGet, getURL, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !bytes.Equal(body, data) {
			t.Fatalf("GET %s: %s %q; want 200 %q", getURL, resp.Status, body, data)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "text/plain" {
			t.Errorf("GET Content-Type = %q, want text/plain", ct)
		}
	})
}
