package localcloud

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Bucket is an S3 bucket created locally from the template, on the S3 that fauxqs serves on
// its SQS port. Its properties (lifecycle rules, encryption) are not emulated: objects live
// as long as the emulator.
type Bucket struct {
	Name string `json:"name"`
	ARN  string `json:"arn"`
}

// S3Client returns an S3 client for fauxqs's S3, at the SQS endpoint, addressed path-style.
func (e Endpoints) S3Client() *s3.Client {
	return s3.NewFromConfig(AWSConfig(), func(o *s3.Options) {
		o.BaseEndpoint = aws.String(e.SQS)
		o.UsePathStyle = true
	})
}

// createBuckets creates the template's buckets, named <prefix>-<logical id> in lower case (a
// bucket name has no capitals), so that !Ref and !GetAtt … .Arn resolve to them.
func (c *Cloud) createBuckets(ctx context.Context) error {
	client := c.endpoints.S3Client()
	for _, id := range c.tmpl.Buckets {
		name := strings.ToLower(c.cfg.Prefix + "-" + id)
		if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
			return fmt.Errorf("create bucket %s: %w", id, err)
		}
		c.refs.buckets[id] = Bucket{Name: name, ARN: "arn:aws:s3:::" + name}
	}
	c.endpoints.Buckets = c.refs.buckets
	return nil
}
