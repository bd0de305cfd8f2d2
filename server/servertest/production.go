package servertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server/dynamo"
	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/server/redis"
	"github.com/chatterm/chat/server/s3"
)

// With CHATSERVER_TEST_BACKEND=production every server gets the production
// backends against the test services (scripts/services.sh): DynamoDB and S3 at
// CHAT_TEST_DYNAMO_ENDPOINT (moto), Redis at CHAT_TEST_REDIS_ADDR. Each server
// has its own tables, Redis key prefix and bucket, created here and dropped when
// the test ends; Restart keeps them, as a process restart would.
func init() {
	if os.Getenv("CHATSERVER_TEST_BACKEND") != "production" {
		return
	}
	// moto accepts any credentials; its transactions are not safe under
	// concurrency, so the store sends one write at a time (see dynamo.Options).
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "CHAT_DYNAMO_SERIAL_WRITES": "1"} {
		if os.Getenv(k) == "" {
			os.Setenv(k, v)
		}
	}
	productionConfig = productionServices
}

func productionServices(tb testing.TB) node.Production {
	tb.Helper()
	// CHATSERVER_TEST_BACKEND=production needs both services.
	redisAddr := testenv.RedisAddr(tb)
	endpoint := testenv.DynamoEndpoint(tb)
	var b [6]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	p := node.Production{
		DynamoEndpoint: endpoint,
		// A region of its own: moto keeps regions apart, and undoes a whole
		// region's concurrent writes when a transaction fails.
		DynamoRegion: "t" + id[:8],
		TablePrefix:  "e2e-" + id + "-",
		CreateTables: true,
		RedisAddrs:   []string{redisAddr},
		RedisPrefix:  "e2e:" + id + ":",
		S3Bucket:     "e2e-" + id,
		S3Endpoint:   endpoint,
		S3Region:     "us-east-1",
		S3PathStyle:  true,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	blobs, err := s3.Open(ctx, s3.Options{Bucket: p.S3Bucket, Region: p.S3Region, Endpoint: endpoint, PathStyle: true})
	if err != nil {
		tb.Fatal(err)
	}
	if err := blobs.CreateBucket(ctx); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { dropProduction(tb, p, blobs) })
	return p
}

// dropProduction removes what a test's servers left in the shared services.
func dropProduction(tb testing.TB, p node.Production, blobs *s3.Store) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if st, err := dynamo.Open(ctx, dynamo.Options{Region: p.DynamoRegion, Endpoint: p.DynamoEndpoint, TablePrefix: p.TablePrefix}); err == nil {
		if err := st.DeleteTables(ctx); err != nil {
			tb.Logf("servertest: dropping tables: %v", err)
		}
	}
	if rc, err := redis.New(redis.Options{Addrs: p.RedisAddrs}); err == nil {
		u := rc.Universal()
		iter := u.Scan(ctx, 0, p.RedisPrefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			u.Del(ctx, iter.Val())
		}
		rc.Close()
	}
	c := blobs.Client()
	pages := awss3.NewListObjectsV2Paginator(c, &awss3.ListObjectsV2Input{Bucket: aws.String(p.S3Bucket)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			break
		}
		for _, o := range page.Contents {
			_, _ = c.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: aws.String(p.S3Bucket), Key: o.Key})
		}
	}
	_, _ = c.DeleteBucket(ctx, &awss3.DeleteBucketInput{Bucket: aws.String(p.S3Bucket)})
}
