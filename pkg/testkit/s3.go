package testkit

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// S3Client returns a client for the S3 that fauxqs serves on the same port as SQS ($SQS_ENDPOINT),
// addressed path-style (http://127.0.0.1:<port>/<bucket>/<key>), as fauxqs wants.
func S3Client(tb testing.TB, opts ...func(*s3.Options)) *s3.Client {
	tb.Helper()
	url := Emulator(tb, SQSEndpointVariable)
	return s3.NewFromConfig(Config(), append([]func(*s3.Options){func(o *s3.Options) {
		o.BaseEndpoint = aws.String(url)
		o.UsePathStyle = true
	}}, opts...)...)
}

// Bucket creates a bucket named from prefix, unique to this run, and returns its name. The
// emulator keeps it in memory until it stops.
func Bucket(tb testing.TB, client *s3.Client, prefix string) string {
	tb.Helper()
	name := strings.ToLower(Name(prefix))
	if _, err := client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		tb.Fatalf("create bucket %s: %v", name, err)
	}
	return name
}
