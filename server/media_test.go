package server_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/dynamo"
	"github.com/chatterm/chat/server/files"
	"github.com/chatterm/chat/server/s3"
	"github.com/chatterm/chat/wire"
)

// mediaBackends are the store and blob store pairs the media limits are
// tested on: the embedded one, and DynamoDB with S3 (moto).
var mediaBackends = []struct {
	name string
	open func(t *testing.T) (server.Store, server.BlobStore)
}{
	{"sqlite+files", func(t *testing.T) (server.Store, server.BlobStore) {
		mux := http.NewServeMux()
		front := httptest.NewServer(mux)
		t.Cleanup(front.Close)
		blobs, err := files.Open(filepath.Join(t.TempDir(), "blobs"), files.Options{BaseURL: front.URL + "/blobs/"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { blobs.Close() })
		mux.Handle("/blobs/", http.StripPrefix("/blobs/", blobs.Handler()))
		return openStore(t), blobs
	}},
	{"dynamo+s3", func(t *testing.T) (server.Store, server.BlobStore) {
		endpoint := testenv.DynamoEndpoint(t)
		var b [6]byte
		_, _ = rand.Read(b[:])
		id := hex.EncodeToString(b[:])
		ctx := context.Background()
		store, err := dynamo.Open(ctx, dynamo.Options{Endpoint: endpoint, Region: "t" + id[:8], TablePrefix: "media-" + id + "-",
			AccessKeyID: "test", SecretAccessKey: "test", SkipResponseChecksum: true, SerialWrites: true, CallTimeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if err := store.CreateTables(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.DeleteTables(context.Background()); store.Close() })
		bucket := "media-" + id
		blobs, err := s3.Open(ctx, s3.Options{Bucket: bucket, Region: "us-east-1", Endpoint: endpoint, PathStyle: true,
			AccessKeyID: "test", SecretAccessKey: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if err := blobs.CreateBucket(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			c := blobs.Client()
			out, _ := c.ListObjectsV2(ctx, &awss3.ListObjectsV2Input{Bucket: aws.String(bucket)})
			if out != nil {
				for _, o := range out.Contents {
					_, _ = c.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: aws.String(bucket), Key: o.Key})
				}
			}
			_, _ = c.DeleteBucket(ctx, &awss3.DeleteBucketInput{Bucket: aws.String(bucket)})
		})
		return store, blobs
	}},
}

// clock is a settable clock for a Service.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func upload(t *testing.T, url, contentType string, body []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("If-None-Match", "*")
	req.Header.Set("Content-Disposition", "attachment")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		t.Fatalf("upload: %s", resp.Status)
	}
}

func code(err error) wire.Code {
	if err == nil {
		return ""
	}
	return wire.AsError(err).Code
}

// One user's media is bounded in bytes stored and bytes a second, and what
// no message carried is deleted after the grace period, giving the quota
// back; what was sent stays.
func TestMediaLimits(t *testing.T) {
	for _, b := range mediaBackends {
		t.Run(b.name, func(t *testing.T) {
			store, blobs := b.open(t)
			clk := &clock{now: time.Now()}
			svc := serviceOn(t, store, server.Config{SendRate: -1, Now: clk.Now, Backends: server.Backends{Blobs: blobs},
				MediaQuota: 3000, MediaRate: 1000, MaxMediaBytes: 1000, MediaUnsentTTL: time.Hour})
			registerAliceAndBob(t, svc)
			ctx := context.Background()
			conv := wire.DirectConversationID("alice", "bob")
			if _, _, err := svc.CreateConversation(ctx, "alice", wire.CreateConversationRequest{Type: wire.Direct, Members: []string{"bob"}}); err != nil {
				t.Fatal(err)
			}
			body := bytes.Repeat([]byte("x"), 1000)
			create := func(size int64) (wire.MediaResponse, error) {
				return svc.CreateMedia(ctx, "alice", wire.MediaRequest{ContentType: "application/octet-stream", Size: size})
			}
			if _, err := create(1001); code(err) != wire.CodeTooLarge {
				t.Fatalf("an upload over the largest file = %v, want too_large", err)
			}
			if _, err := create(0); code(err) != wire.CodeInvalid {
				t.Fatalf("an upload of no declared size = %v, want invalid", err)
			}
			var ups []wire.MediaResponse
			for range 2 { // the burst: two largest files
				up, err := create(1000)
				if err != nil {
					t.Fatal(err)
				}
				upload(t, up.UploadURL, "application/octet-stream", body)
				ups = append(ups, up)
			}
			_, err := create(1000)
			if e := wire.AsError(err); e.Code != wire.CodeRateLimited || e.RetryAfterMs != 1000 {
				t.Fatalf("a third file at once = %v, want rate_limited with a 1 s hint", err)
			}
			clk.Add(time.Second)
			up, err := create(1000)
			if err != nil {
				t.Fatalf("after the hint: %v", err)
			}
			ups = append(ups, up)
			clk.Add(10 * time.Second)
			if _, err := create(1); code(err) != wire.CodeQuota || wire.CodeQuota.HTTPStatus() != http.StatusRequestEntityTooLarge {
				t.Fatalf("an upload past the quota = %v, want quota_exceeded (413)", err)
			}
			u, err := svc.MediaUsage(ctx, "alice", "")
			if err != nil || u.Bytes != 3000 || u.Uploads != 3 || u.QuotaBytes != 3000 {
				t.Fatalf("usage %+v, %v; want 3000 bytes in 3 uploads of 3000", u, err)
			}
			if _, err := svc.MediaUsage(ctx, "bob", "alice"); code(err) != wire.CodeForbidden {
				t.Fatalf("bob reading alice's usage = %v, want forbidden", err)
			}

			// The first is sent; the other two never are.
			if _, _, err := svc.Send(ctx, "alice", conv, wire.SendRequest{MessageID: "m1", Attachment: ups[0].MediaID}, nil); err != nil {
				t.Fatal(err)
			}
			clk.Add(30 * time.Minute)
			if n, err := svc.SweepMediaOnce(ctx); n != 0 || err != nil {
				t.Fatalf("a sweep within the grace period deleted %d, %v", n, err)
			}
			clk.Add(time.Hour)
			if n, err := svc.SweepMediaOnce(ctx); n != 2 || err != nil {
				t.Fatalf("sweep after the grace period: %d deleted, %v; want 2", n, err)
			}
			for _, up := range ups[1:] {
				if _, err := blobs.Get(ctx, up.MediaID); !errors.Is(err, server.ErrNotFound) {
					t.Fatalf("unsent %s still stored: %v", up.MediaID, err)
				}
			}
			if got, err := blobs.Get(ctx, ups[0].MediaID); err != nil || !bytes.Equal(got, body) {
				t.Fatalf("the sent file after the sweep: %d bytes, %v", len(got), err)
			}
			if _, err := svc.MediaURL(ctx, "bob", ups[0].MediaID); err != nil {
				t.Fatalf("bob's download of the sent file: %v", err)
			}
			// A swept upload can no longer be sent, and nothing is stored.
			_, _, err = svc.Send(ctx, "alice", conv, wire.SendRequest{MessageID: "m2", Attachment: ups[1].MediaID}, nil)
			if code(err) != wire.CodeNotFound {
				t.Fatalf("sending a swept upload = %v, want not_found", err)
			}
			// alice registered first: the server's admin sees anyone's usage.
			if u, err := svc.MediaUsage(ctx, "alice", "bob"); err != nil || u.UserID != "bob" || u.Bytes != 0 {
				t.Fatalf("the admin's view of bob's usage: %+v %v", u, err)
			}
			u, err = svc.MediaUsage(ctx, "alice", "")
			if err != nil || u.Bytes != 1000 || u.Uploads != 1 {
				t.Fatalf("usage after the sweep %+v, %v; want the sent 1000 bytes", u, err)
			}
			if _, err := create(1000); err != nil {
				t.Fatalf("an upload into the quota the sweep gave back: %v", err)
			}
			if n, err := svc.SweepMediaOnce(ctx); n != 0 || err != nil {
				t.Fatalf("a second sweep: %d, %v", n, err)
			}
		})
	}
}
