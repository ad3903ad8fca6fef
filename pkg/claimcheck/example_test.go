package claimcheck_test

import (
	"log"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/pkg/claimcheck"
	"github.com/onceflow/onceflow/pkg/publish"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
)

// A publisher whose messages past 1 MiB go through S3, and the consumer's side: a Reader of
// that bucket only, read before decoding.
func Example() {
	var cfg aws.Config // config.LoadDefaultConfig(ctx) of github.com/aws/aws-sdk-go-v2/config, once at init
	bucket := os.Getenv("PAYLOAD_BUCKET")
	w, err := claimcheck.NewWriter(s3.NewFromConfig(cfg), claimcheck.WriterConfig{Bucket: bucket})
	if err != nil {
		log.Fatal(err)
	}
	pub, err := publish.New(sqs.NewFromConfig(cfg), publish.Config{ClaimCheck: w})
	if err != nil {
		log.Fatal(err)
	}
	_ = pub // pub.Publish(ctx, queueURL, events...)

	r, err := claimcheck.NewReader(s3.NewFromConfig(cfg), claimcheck.ReaderConfig{Buckets: []string{bucket}})
	if err != nil {
		log.Fatal(err)
	}
	_ = sqsbatch.Config{Payloads: r} // with sqsbatch.NewConsumer or NewFor
}
