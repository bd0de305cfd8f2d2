// Package s3 is the production BlobStore on Amazon S3 (or any S3 API): media and
// cold messages as objects, and presigned PUT and GET URLs that clients use
// directly, so blob bytes never pass through chatserver.
package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/breaker"
)

var _ server.BlobStore = (*Store)(nil)

// Options configure a Store. Zero fields take the defaults in brackets.
type Options struct {
	Bucket string // required
	// KeyPrefix starts every object key, so deployments can share a bucket [none].
	KeyPrefix string
	Region    string // [from the environment / shared config]
	// Endpoint overrides the service URL (moto, MinIO) [AWS's]; PathStyle puts the
	// bucket in the path instead of the host name (what most S3 look-alikes need).
	Endpoint  string
	PathStyle bool
	// Static credentials for local test servers; empty uses the default chain.
	AccessKeyID     string
	SecretAccessKey string
	// CallTimeout bounds one call, retries included [10s]; DialTimeout bounds
	// connecting [300ms].
	CallTimeout time.Duration
	DialTimeout time.Duration
	// MaxSize refuses larger Puts [64 MiB]: Put holds the object in memory.
	MaxSize int
	// MaxAttempts is how often the SDK tries one call, with backoff [3].
	MaxAttempts int
	// Breaker tunes the circuit breaker around Put and Get [5 failures in a
	// row, or half of at least 20 calls within 30 s]; Registerer gets its state
	// gauge and Logger its one line per outage and per recovery.
	Breaker    breaker.Options
	Registerer prometheus.Registerer
	Logger     *slog.Logger
}

// breakerDefaults: S3 calls are few (uploads go by presigned URL; the archiver
// and reads of archived messages call it), so consecutive failures open the
// circuit as often as the ratio does.
var breakerDefaults = breaker.Options{Window: 30 * time.Second, MinRequests: 20, FailureRatio: 0.5}

// Store is a BlobStore on one S3 bucket.
type Store struct {
	c       *awss3.Client
	presign *awss3.PresignClient
	o       Options
	cb      *breaker.Breaker
}

// Open builds a Store; it does not contact S3.
func Open(ctx context.Context, o Options) (*Store, error) {
	if o.Bucket == "" {
		return nil, errors.New("s3: bucket is required")
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 10 * time.Second
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 300 * time.Millisecond
	}
	if o.MaxSize <= 0 {
		o.MaxSize = 64 << 20
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 3
	}
	httpClient := awshttp.NewBuildableClient().
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = o.DialTimeout }).
		WithTransportOptions(func(tr *http.Transport) { tr.MaxIdleConnsPerHost = 64 })
	loadOpts := []func(*config.LoadOptions) error{
		config.WithHTTPClient(httpClient),
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(so *retry.StandardOptions) { so.MaxAttempts = o.MaxAttempts })
		}),
	}
	if o.Region != "" {
		loadOpts = append(loadOpts, config.WithRegion(o.Region))
	}
	if o.AccessKeyID != "" {
		loadOpts = append(loadOpts, config.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(o.AccessKeyID, o.SecretAccessKey, "")))
	}
	cfg, err := config.LoadDefaultConfig(ctx, loadOpts...)
	if err != nil {
		return nil, fmt.Errorf("s3: aws config: %w", err)
	}
	c := awss3.NewFromConfig(cfg, func(so *awss3.Options) {
		if o.Endpoint != "" {
			so.BaseEndpoint = aws.String(o.Endpoint)
		}
		so.UsePathStyle = o.PathStyle
		// Objects uploaded through presigned URLs carry no checksum; the SDK would
		// log a line for every read of one.
		so.DisableLogOutputChecksumValidationSkipped = true
	})
	cb, err := breaker.New("s3", o.Breaker, breakerDefaults, o.Registerer, o.Logger, isFailure, isExcluded)
	if err != nil {
		return nil, fmt.Errorf("s3: %w", err)
	}
	return &Store{c: c, presign: awss3.NewPresignClient(c), o: o, cb: cb}, nil
}

// do runs f through the circuit breaker: an open circuit fails at once with
// server.ErrUnavailable, and so does a call that failed for S3's sake.
func (s *Store) do(ctx context.Context, f func(context.Context) error) error {
	done, err := s.cb.Allow()
	if err != nil {
		return fmt.Errorf("%w: %w: %w", server.ErrUnavailable, server.ErrNotApplied, err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.o.CallTimeout)
	defer cancel()
	err = f(ctx)
	done(err)
	if isFailure(err) && !isExcluded(err) {
		return fmt.Errorf("%w: %w", server.ErrUnavailable, err)
	}
	return err
}

// isFailure says whether err means S3 (not the request) is in trouble: no
// answer, a timeout, or a 5xx. A missing key or a refused request is an answer.
func isFailure(err error) bool {
	if err == nil || errors.Is(err, server.ErrNotFound) {
		return false
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() > 0 {
		return re.HTTPStatusCode() >= 500
	}
	return true
}

// isExcluded: the caller gave up; that says nothing about S3.
func isExcluded(err error) bool { return errors.Is(err, context.Canceled) }

// Client is the SDK client, for tests and tools.
func (s *Store) Client() *awss3.Client { return s.c }

func (s *Store) key(k string) string { return s.o.KeyPrefix + k }

func checkKey(k string) error {
	if k == "" || len(k) > 900 {
		return fmt.Errorf("s3: object key %q: empty or too long", k)
	}
	return nil
}

// ErrNoBucket: the configured bucket does not exist, or these credentials may
// not use it. A server must not start on it: the first upload would fail.
var ErrNoBucket = errors.New("s3: the bucket does not exist or is not ours")

// CheckBucket asks S3 whether the bucket is there for us (HeadBucket). A
// missing or forbidden bucket is ErrNoBucket, a configuration error; S3 not
// answering is another error, an outage the circuit breaker rides out.
func (s *Store) CheckBucket(ctx context.Context) error {
	_, err := s.c.HeadBucket(ctx, &awss3.HeadBucketInput{Bucket: aws.String(s.o.Bucket)})
	if err == nil {
		return nil
	}
	var notFound *types.NotFound
	var noBucket *types.NoSuchBucket
	var re *awshttp.ResponseError
	if errors.As(err, &notFound) || errors.As(err, &noBucket) ||
		errors.As(err, &re) && (re.HTTPStatusCode() == http.StatusNotFound || re.HTTPStatusCode() == http.StatusForbidden) {
		return fmt.Errorf("%w: %s: %w", ErrNoBucket, s.o.Bucket, err)
	}
	return fmt.Errorf("s3: check bucket %s: %w", s.o.Bucket, err)
}

// CreateBucket creates the bucket if it does not exist (tests, first setup).
func (s *Store) CreateBucket(ctx context.Context) error {
	in := &awss3.CreateBucketInput{Bucket: aws.String(s.o.Bucket)}
	if r := s.c.Options().Region; r != "" && r != "us-east-1" {
		in.CreateBucketConfiguration = &types.CreateBucketConfiguration{LocationConstraint: types.BucketLocationConstraint(r)}
	}
	_, err := s.c.CreateBucket(ctx, in)
	var owned *types.BucketAlreadyOwnedByYou
	if err != nil && !errors.As(err, &owned) {
		return fmt.Errorf("s3: create bucket %s: %w", s.o.Bucket, err)
	}
	return nil
}

// Put stores data under key with its content type.
func (s *Store) Put(ctx context.Context, key string, data []byte, contentType string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if len(data) > s.o.MaxSize {
		return fmt.Errorf("s3: put %s: %d bytes is over the %d limit", key, len(data), s.o.MaxSize)
	}
	in := &awss3.PutObjectInput{
		Bucket: aws.String(s.o.Bucket), Key: aws.String(s.key(key)),
		Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data))), // seekable: signed over plain http too
	}
	if contentType != "" {
		in.ContentType = aws.String(contentType)
	}
	err := s.do(ctx, func(ctx context.Context) error {
		_, err := s.c.PutObject(ctx, in)
		return err
	})
	if err != nil {
		return fmt.Errorf("s3: put %s: %w", key, err)
	}
	return nil
}

// Delete removes key; S3 answers a missing key with success too.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	err := s.do(ctx, func(ctx context.Context) error {
		_, err := s.c.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: aws.String(s.o.Bucket), Key: aws.String(s.key(key))})
		return err
	})
	if err != nil {
		return fmt.Errorf("s3: delete %s: %w", key, err)
	}
	return nil
}

// Get returns the object's bytes, or server.ErrNotFound.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	var data []byte
	err := s.do(ctx, func(ctx context.Context) error {
		out, err := s.c.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(s.o.Bucket), Key: aws.String(s.key(key))})
		var nsk *types.NoSuchKey
		if errors.As(err, &nsk) {
			return server.ErrNotFound
		}
		if err != nil {
			return err
		}
		defer out.Body.Close()
		data, err = io.ReadAll(io.LimitReader(out.Body, int64(s.o.MaxSize)+1))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("s3: get %s: %w", key, err)
	}
	if len(data) > s.o.MaxSize {
		return nil, fmt.Errorf("s3: get %s: over the %d byte limit", key, s.o.MaxSize)
	}
	return data, nil
}

// PresignPut returns a URL for one PUT of size bytes to key with Content-Type contentType
// (the signature covers it: the client must send the same header).
func (s *Store) PresignPut(ctx context.Context, key, contentType string, size int64, ttl time.Duration) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	if size < 0 {
		return "", fmt.Errorf("s3: presign put %s: size %d is negative", key, size)
	}
	if ttl <= 0 || ttl > 7*24*time.Hour {
		return "", fmt.Errorf("s3: presign put %s: ttl %v not in (0, 7 days]", key, ttl)
	}
	// If-None-Match is signed into the URL: S3 then refuses a second PUT to
	// the key (412), so an upload cannot replace a file after it was sent. The
	// uploader must send "If-None-Match: *" and "Content-Disposition: attachment".
	// Content-Disposition is stored with the object, so every GET of it says
	// "download" (the presigned GET asks for it too).
	// Content-Length is signed too: S3 refuses a body of any other size, so
	// an upload is no bigger than its reservation counted against the quota.
	in := &awss3.PutObjectInput{Bucket: aws.String(s.o.Bucket), Key: aws.String(s.key(key)), IfNoneMatch: aws.String("*"),
		ContentDisposition: aws.String("attachment"), ContentLength: aws.Int64(size)}
	if contentType != "" {
		in.ContentType = aws.String(contentType)
	}
	req, err := s.presign.PresignPutObject(ctx, in, awss3.WithPresignExpires(ttl))
	if err != nil {
		return "", fmt.Errorf("s3: presign put %s: %w", key, err)
	}
	return req.URL, nil
}

// PresignGet returns a URL serving key until ttl from now.
func (s *Store) PresignGet(ctx context.Context, key string, ttl time.Duration) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	if ttl <= 0 || ttl > 7*24*time.Hour {
		return "", fmt.Errorf("s3: presign get %s: ttl %v not in (0, 7 days]", key, ttl)
	}
	// Served as a download, never rendered: media comes from other people.
	req, err := s.presign.PresignGetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(s.o.Bucket), Key: aws.String(s.key(key)),
		ResponseContentDisposition: aws.String("attachment")},
		awss3.WithPresignExpires(ttl))
	if err != nil {
		return "", fmt.Errorf("s3: presign get %s: %w", key, err)
	}
	return req.URL, nil
}
