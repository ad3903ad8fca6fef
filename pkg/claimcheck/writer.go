package claimcheck

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// PutObjectAPI is the one S3 call a Writer makes; *s3.Client implements it.
type PutObjectAPI interface {
	PutObject(ctx context.Context, in *s3.PutObjectInput, opts ...func(*s3.Options)) (*s3.PutObjectOutput, error)
}

// WriterConfig says where a Writer stores payloads.
type WriterConfig struct {
	// Bucket is the S3 bucket of the payloads; required. Its lifecycle rule should expire
	// objects after the consumers' record retention (template.yaml's PayloadBucket does).
	Bucket string
	// KeyPrefix is put before every object key (letters, digits and . / _ -, as the Java
	// library allows); default none.
	KeyPrefix string
}

var keyPrefixChars = regexp.MustCompile(`^[a-zA-Z0-9./_-]*$`)

// Validate reports every problem of c, joined.
func (c WriterConfig) Validate() error {
	var errs []error
	if c.Bucket == "" {
		errs = append(errs, errors.New("claimcheck: Bucket is required"))
	}
	if !keyPrefixChars.MatchString(c.KeyPrefix) || len(c.KeyPrefix) > 900 {
		errs = append(errs, fmt.Errorf("claimcheck: KeyPrefix %q: want at most 900 of a-z A-Z 0-9 . / _ -", c.KeyPrefix))
	}
	return errors.Join(errs...)
}

// Writer stores payloads in S3. It is safe for concurrent use.
type Writer struct {
	client PutObjectAPI
	cfg    WriterConfig
}

// NewWriter returns a Writer storing payloads with client where cfg says.
func NewWriter(client PutObjectAPI, cfg WriterConfig) (*Writer, error) {
	errs := []error{cfg.Validate()}
	if client == nil {
		errs = append(errs, errors.New("claimcheck: client is required"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &Writer{client: client, cfg: cfg}, nil
}

// Offload stores payload as an object and returns the pointer to it. The key is the payload's
// SHA-256 (after KeyPrefix): a retried send writes the same object again, never a second one,
// and a pointer always names the bytes it was sent with.
func (w *Writer) Offload(ctx context.Context, payload string) (Pointer, error) {
	sum := sha256.Sum256([]byte(payload))
	p := Pointer{Bucket: w.cfg.Bucket, Key: w.cfg.KeyPrefix + hex.EncodeToString(sum[:])}
	_, err := w.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(p.Bucket), Key: aws.String(p.Key),
		Body: strings.NewReader(payload), ContentLength: aws.Int64(int64(len(payload))),
		ContentType: aws.String("text/plain; charset=utf-8")})
	if err != nil {
		return Pointer{}, fmt.Errorf("claim check %s: %w", p, err)
	}
	return p, nil
}

// OffloadMessage stores payload and returns the message that points to it: the pointer body
// and the ExtendedPayloadSize attribute, as the extended client libraries send them. It is
// what publish.Config.ClaimCheck calls.
func (w *Writer) OffloadMessage(ctx context.Context, payload string) (string, map[string]sqstypes.MessageAttributeValue, error) {
	p, err := w.Offload(ctx, payload)
	if err != nil {
		return "", nil, err
	}
	return p.Body(), map[string]sqstypes.MessageAttributeValue{SizeAttribute: {DataType: aws.String("Number"),
		StringValue: aws.String(SizeAttributeValue(len(payload)))}}, nil
}
