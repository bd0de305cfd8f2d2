package node_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// modes lists every file and directory under dir that another user could
// read: none should be.
func openToOthers(t *testing.T, dir string) []string {
	t.Helper()
	var open []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o077 != 0 {
			open = append(open, p+" "+fi.Mode().Perm().String())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return open
}

// The embedded backend keeps its data from other local users: the database,
// its WAL, the blobs and the data directory itself are private, whether the
// server makes them or finds them (a 0755 directory and a 0644 database, as
// earlier versions left them, are tightened, with a log line).
func TestDataDirIsPrivate(t *testing.T) {
	if os.Getenv("CHATSERVER_TEST_BACKEND") == "production" {
		t.Skip("the embedded backend's files")
	}
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var logs logBuffer
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) {
		c.DataDir = dir
		c.Logger = slogTo(&logs)
	}))
	tok := register(t, srv.URL, "alice")
	register(t, srv.URL, "bob")
	// A message and a blob, so the WAL and the blob files exist.
	conv := wire.DirectConversationID("alice", "bob")
	post := func(path string, body string) *http.Response {
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	post("/v1/conversations", `{"type":"direct","members":["bob"]}`).Body.Close()
	resp := post("/v1/conversations/"+conv+"/messages", `{"message_id":"m1","content":"hi"}`)
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("send: %d", resp.StatusCode)
	}
	var media wire.MediaResponse
	resp = post("/v1/media", `{"content_type":"image/png","size":3}`)
	if err := jsonDecode(resp, &media); err != nil {
		t.Fatal(err)
	}
	put, _ := http.NewRequest("PUT", media.UploadURL, bytes.NewReader([]byte("png")))
	put.Header.Set("Content-Type", "image/png")
	if resp, err := http.DefaultClient.Do(put); err != nil || resp.StatusCode >= 300 {
		t.Fatalf("upload: %v %v", resp, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "chat.db-wal")); err != nil {
		t.Fatalf("no WAL to check: %v", err)
	}
	if open := openToOthers(t, dir); len(open) > 0 {
		t.Fatalf("open to other users:\n%s", strings.Join(open, "\n"))
	}
	if !strings.Contains(logs.String(), "made it private") {
		t.Fatalf("no log line for the 0755 data directory:\n%s", logs.String())
	}

	// Files left open by an earlier version are tightened at start.
	srv.Close()
	os.Chmod(dir, 0o755)
	for _, f := range []string{"chat.db", "chat.db-wal", "chat.db-shm"} {
		os.Chmod(filepath.Join(dir, f), 0o644)
	}
	srv.Restart(t)
	if open := openToOthers(t, dir); len(open) > 0 {
		t.Fatalf("open to other users after a restart:\n%s", strings.Join(open, "\n"))
	}
}

func slogTo(b *logBuffer) *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }

func jsonDecode(resp *http.Response, v any) error {
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}
