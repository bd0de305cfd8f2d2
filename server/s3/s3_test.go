package s3_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server"
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
	put, err := s.PresignPut(ctx, "media/a.png", "image/png", 15*time.Minute)
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
