package s3_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/breaker"
	"github.com/chatterm/chat/server/roletest"
	"github.com/chatterm/chat/server/s3"
)

// endpoint is the S3 API the tests use: moto serves it beside DynamoDB
// (scripts/services.sh).
func endpoint(t testing.TB) string {
	t.Helper()
	return testenv.Require(t, testenv.DynamoVar, "moto's S3")
}

// open returns a Store on a bucket of its own, emptied and dropped after the test.
func open(t *testing.T) *s3.Store {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	bucket := "chat-test-" + hex.EncodeToString(b[:])
	s, err := s3.Open(context.Background(), s3.Options{Bucket: bucket, KeyPrefix: "p/", Region: "us-east-1",
		Endpoint: endpoint(t), PathStyle: true, AccessKeyID: "test", SecretAccessKey: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateBucket(context.Background()); err != nil {
		t.Fatalf("CreateBucket again: %v", err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		c := s.Client()
		p := awss3.NewListObjectsV2Paginator(c, &awss3.ListObjectsV2Input{Bucket: aws.String(bucket)})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				t.Logf("cleanup: %v", err)
				return
			}
			for _, o := range page.Contents {
				_, _ = c.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: aws.String(bucket), Key: o.Key})
			}
		}
		_, _ = c.DeleteBucket(ctx, &awss3.DeleteBucketInput{Bucket: aws.String(bucket)})
	})
	return s
}

func TestBlobStore(t *testing.T) {
	roletest.BlobStore(t, func(t *testing.T) server.BlobStore { return open(t) })
}

// TestPresignedURLs checks what the test server cannot: the URLs carry a
// signature over the method, the expiry and (for PUT) the content type.
func TestPresignedURLs(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	put, err := s.PresignPut(ctx, "media/a.png", "image/png", 1234, 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(put)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if q.Get("X-Amz-Expires") != "900" || q.Get("X-Amz-Signature") == "" || !strings.Contains(q.Get("X-Amz-SignedHeaders"), "content-type") {
		t.Fatalf("presigned PUT %s lacks expiry, signature or signed content type", put)
	}
	// The size is signed: S3 refuses a body of another length, so an upload
	// is what its reservation counted against the quota.
	if !strings.Contains(q.Get("X-Amz-SignedHeaders"), "content-length") {
		t.Fatalf("presigned PUT %s does not sign content-length", put)
	}
	if !strings.HasSuffix(u.Path, "/p/media/a.png") {
		t.Fatalf("presigned PUT path %s, want the key under the prefix", u.Path)
	}
	if _, err := s.PresignGet(ctx, "x", 0); err == nil {
		t.Fatal("PresignGet with ttl 0 succeeded")
	}
	if err := s.Put(ctx, "", []byte("x"), ""); err == nil {
		t.Fatal("Put with an empty key succeeded")
	}
}

// S3 that fails (5xx, or no answer) opens the store's circuit: calls then fail
// fast with server.ErrUnavailable, the log has one line when it opens and one
// when S3 answers again, and a missing key is an answer, not a failure.
func TestOutageOpensTheCircuitAndIsLoggedOnce(t *testing.T) {
	target, err := url.Parse(endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	var down atomic.Bool
	rp := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	defer front.Close()
	var logs testenv.LogBuffer
	var b [6]byte
	_, _ = rand.Read(b[:])
	s, err := s3.Open(context.Background(), s3.Options{Bucket: "chat-test-" + hex.EncodeToString(b[:]), Region: "us-east-1",
		Endpoint: front.URL, PathStyle: true, AccessKeyID: "test", SecretAccessKey: "test", MaxAttempts: 1,
		Breaker: breaker.Options{OpenFor: 100 * time.Millisecond, Probes: 1},
		Logger:  slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.CreateBucket(ctx); err != nil {
		t.Fatal(err)
	}
	for range 10 { // missing keys: answers
		if _, err := s.Get(ctx, "missing"); !errors.Is(err, server.ErrNotFound) {
			t.Fatalf("get of a missing key: %v", err)
		}
	}
	down.Store(true)
	for i := range 20 {
		err := s.Put(ctx, "k", []byte("v"), "text/plain")
		if !errors.Is(err, server.ErrUnavailable) {
			t.Fatalf("put %d while S3 fails: %v, want ErrUnavailable", i, err)
		}
	}
	if err := s.Put(ctx, "k", []byte("v"), "text/plain"); !errors.Is(err, server.ErrNotApplied) {
		t.Fatalf("put with the circuit open: %v, want refused (ErrNotApplied)", err)
	}
	down.Store(false)
	testenv.WaitFor(t, 5*time.Second, func() bool { return s.Put(ctx, "k", []byte("v"), "text/plain") == nil })
	if got, err := s.Get(ctx, "k"); err != nil || string(got) != "v" {
		t.Fatalf("get after recovery: %q, %v", got, err)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "s3 is failing") || !strings.Contains(lines[1], "s3 answers again") {
		t.Fatalf("want one line when S3 failed and one when it answered again, got:\n%s", logs.String())
	}
}

// A bucket that is not there is found at start, as ErrNoBucket, not at the
// first upload; one that is there passes.
func TestCheckBucket(t *testing.T) {
	ctx := context.Background()
	if err := open(t).CheckBucket(ctx); err != nil {
		t.Fatalf("CheckBucket on a created bucket: %v", err)
	}
	missing, err := s3.Open(ctx, s3.Options{Bucket: "chat-test-never-created", Region: "us-east-1",
		Endpoint: endpoint(t), PathStyle: true, AccessKeyID: "test", SecretAccessKey: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := missing.CheckBucket(ctx); !errors.Is(err, s3.ErrNoBucket) {
		t.Fatalf("CheckBucket on a missing bucket: %v, want ErrNoBucket", err)
	}
}
