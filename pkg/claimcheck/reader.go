package claimcheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// DefaultMaxBytes is the default bound on a payload a Reader reads: 32 MiB, a few times what a
// function of 128 MB can hold while its batch's other payloads are in memory too.
const DefaultMaxBytes = 32 << 20

// GetObjectAPI is the one S3 call a Reader makes; *s3.Client implements it.
type GetObjectAPI interface {
	GetObject(ctx context.Context, in *s3.GetObjectInput, opts ...func(*s3.Options)) (*s3.GetObjectOutput, error)
}

// ReaderConfig tunes a Reader. The zero value works.
type ReaderConfig struct {
	// MaxBytes bounds the size of a payload; a larger one is refused (permanently) without
	// being read past the bound. Default DefaultMaxBytes.
	MaxBytes int64
	// Buckets, when set, are the only buckets a pointer may name; a pointer to another is
	// refused (permanently). IAM should say the same: see docs/large-payloads.md.
	Buckets []string
}

// PayloadReader returns the payload of a message: its body, or what its body points to.
// *Reader is one; a port (sqsbatch.Config.Payloads, batch.ReplayConfig.Payloads) and the
// dead-letter tools (dlq.RedriveConfig.Payloads) take it. It is called concurrently.
type PayloadReader interface {
	Payload(ctx context.Context, msg events.SQSMessage) (string, error)
}

// Reader reads the payloads of messages that carry a pointer. It is safe for concurrent use.
type Reader struct {
	client GetObjectAPI
	cfg    ReaderConfig
}

// NewReader returns a Reader fetching objects with client.
func NewReader(client GetObjectAPI, cfg ReaderConfig) (*Reader, error) {
	var errs []error
	if client == nil {
		errs = append(errs, errors.New("claimcheck: client is required"))
	}
	if cfg.MaxBytes < 0 {
		errs = append(errs, fmt.Errorf("claimcheck: MaxBytes is %d; want a positive bound (0 means %d)", cfg.MaxBytes, DefaultMaxBytes))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	return &Reader{client: client, cfg: cfg}, nil
}

// Payload returns the payload of msg: its body, or the object its pointer names. An error
// that can never go away (a malformed pointer, an ObjectError) is permanent; any other (S3
// unreachable, throttled, access denied) is not, and the message is retried.
func (r *Reader) Payload(ctx context.Context, msg events.SQSMessage) (string, error) {
	p, size, ok, err := Parse(msg)
	if !ok || err != nil {
		return msg.Body, err
	}
	if len(r.cfg.Buckets) > 0 && !slices.Contains(r.cfg.Buckets, p.Bucket) {
		return "", &ObjectError{Pointer: p, Reason: "not in a bucket this consumer reads"}
	}
	if size > r.cfg.MaxBytes {
		return "", r.tooLarge(p, fmt.Sprint(size))
	}
	out, err := r.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(p.Bucket), Key: aws.String(p.Key)})
	if err != nil {
		var noKey *types.NoSuchKey
		var noBucket *types.NoSuchBucket
		if errors.As(err, &noKey) || errors.As(err, &noBucket) {
			return "", &ObjectError{Pointer: p, Reason: "no such object (expired after the bucket's retention, or never written)"}
		}
		return "", fmt.Errorf("claim check %s: %w", p, err)
	}
	defer out.Body.Close()
	if n := aws.ToInt64(out.ContentLength); n > r.cfg.MaxBytes {
		return "", r.tooLarge(p, fmt.Sprint(n))
	}
	b, err := io.ReadAll(io.LimitReader(out.Body, r.cfg.MaxBytes+1))
	if err != nil {
		return "", fmt.Errorf("claim check %s: read: %w", p, err)
	}
	if int64(len(b)) > r.cfg.MaxBytes {
		return "", r.tooLarge(p, "more than "+fmt.Sprint(r.cfg.MaxBytes))
	}
	return string(b), nil
}

func (r *Reader) tooLarge(p Pointer, size string) error {
	return &ObjectError{Pointer: p, Reason: fmt.Sprintf("%s bytes, past the bound of %d (ReaderConfig.MaxBytes)", size, r.cfg.MaxBytes)}
}
