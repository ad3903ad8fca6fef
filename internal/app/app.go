package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/internal/api"
	"github.com/onceflow/onceflow/internal/config"
	"github.com/onceflow/onceflow/internal/ledger"
	"github.com/onceflow/onceflow/internal/notes"
	"github.com/onceflow/onceflow/internal/notify"
	"github.com/onceflow/onceflow/internal/statement"
	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/claimcheck"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/dynamodbbatch"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/lease"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/outbox"
	"github.com/onceflow/onceflow/pkg/publish"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
)

// Namespace is the CloudWatch metrics namespace of every function.
const Namespace = "onceflow"

// Deps are what a function's handler is built from: the SDK clients, built once at init (in
// tests, clients of the emulators), the logger and the metrics recorder.
type Deps struct {
	DynamoDB *dynamodb.Client
	SQS      *sqs.Client
	S3       *s3.Client // claim checks' payloads (config PayloadBucket)
	SSM      Parameters // read by the note-notifier at init
	Logger   *slog.Logger
	Metrics  metrics.Recorder // nil records nothing
}

// NewAPI returns the api function's handler.
func NewAPI(cfg config.API, d Deps) (*api.Handler, error) {
	c := api.Config{DB: d.DynamoDB, Table: cfg.AppTable, Logger: d.Logger, ScopePrefix: cfg.ScopePrefix}
	if cfg.IdempotencyTable != "" {
		c.Holds, c.LedgerConsumer = operator.New(d.DynamoDB, cfg.IdempotencyTable), cfg.LedgerConsumer
	}
	return api.New(c)
}

// NewRelay returns the outbox-relay function's handler.
func NewRelay(cfg config.Relay, d Deps) (*outbox.Relay, error) {
	p, err := publish.New(d.SQS, publish.Config{})
	if err != nil {
		return nil, err
	}
	return outbox.NewRelay(outbox.RelayConfig{Sender: p, Routes: cfg.Routes, ParkQueue: cfg.ParkQueueURL, Logger: d.Logger, Metrics: d.Metrics})
}

// NewNoteTagger returns the note-tagger function's handler.
func NewNoteTagger(cfg config.Consumer, d Deps) (*sqsbatch.Processor, error) {
	return newConsumer(cfg, notes.Tagger(cfg.AppTable), idempotency.GoOn, d) // tags commute
}

// NewLedger returns the ledger function's handler.
func NewLedger(cfg config.Consumer, d Deps) (*sqsbatch.Processor, error) {
	// A balance depends on the order of its movements: after a dead letter, an account's later
	// movements wait behind it in the dead-letter queue, in order.
	return newConsumer(cfg, ledger.Handler(cfg.AppTable), idempotency.HoldGroup, d)
}

// Consumer returns the build function of an idempotent consumer, what its main passes to Start:
// newHandler makes the consumer's handler from the app table (CONSUMER_NAME, the tables and the
// dead-letter queue come from config.Consumer), and policy says what a dead letter does to the
// later messages of its group (idempotency.GoOn, idempotency.HoldGroup). A consumer of its own
// needs no other code in this package (docs/consumer.md).
func Consumer[H idempotency.Handler](newHandler func(appTable string) H, policy idempotency.GroupPolicy) func(config.Consumer, Deps) (*sqsbatch.Processor, error) {
	return func(cfg config.Consumer, d Deps) (*sqsbatch.Processor, error) {
		return newConsumer(cfg, newHandler(cfg.AppTable), policy, d)
	}
}

// newConsumer returns an SQS batch handler that applies h's effects exactly once and moves
// malformed messages, and messages that failed port.DefaultMaxAttempts times, to the
// configured dead-letter queue; policy says what their group does next.
func newConsumer(cfg config.Consumer, h idempotency.Handler, policy idempotency.GroupPolicy, d Deps) (*sqsbatch.Processor, error) {
	payloads, err := payloadReader(d, cfg.PayloadBucket)
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", cfg.Name, err)
	}
	dlq, err := deadLetters(d, cfg.Name, cfg.DeadLetterQueueURL, cfg.PayloadBucket)
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", cfg.Name, err)
	}
	return sqsbatch.NewConsumer(d.DynamoDB, h,
		idempotency.Config{Name: cfg.Name, Table: cfg.IdempotencyTable, Retention: cfg.Retention, AfterDeadLetter: policy,
			Logger: d.Logger, Metrics: d.Metrics},
		sqsbatch.Config{Options: batch.Options{DeadLetter: dlq}, MaxReceiveCount: cfg.MaxReceiveCount, Payloads: payloads})
}

// deadLetters is the consumer's dead-letter queue at url; with a payload bucket, a letter past
// SQS's 1 MiB goes there as a claim check, under the consumer's own prefix (DeadLetterPrefix),
// which is all template.yaml lets it write.
func deadLetters(d Deps, consumer, url, bucket string) (*deadletter.Queue, error) {
	q := deadletter.New(d.SQS, url)
	if bucket == "" {
		return q, nil
	}
	w, err := claimcheck.NewWriter(d.S3, claimcheck.WriterConfig{Bucket: bucket, KeyPrefix: DeadLetterPrefix(consumer)})
	if err != nil {
		return nil, fmt.Errorf("dead letters in %s: %w", bucket, err)
	}
	return q.WithClaimCheck(w), nil
}

// DeadLetterPrefix is where consumer's dead letters past SQS's limit are written in the
// payload bucket: dead-letters/<consumer>/.
func DeadLetterPrefix(consumer string) string { return "dead-letters/" + consumer + "/" }

// payloadReader reads claim checks from bucket, the only one a pointer may name; nil (every
// body is its payload) without a bucket.
func payloadReader(d Deps, bucket string) (claimcheck.PayloadReader, error) {
	if bucket == "" {
		return nil, nil
	}
	if d.S3 == nil {
		return nil, fmt.Errorf("payload bucket %s: no S3 client", bucket)
	}
	return claimcheck.NewReader(d.S3, claimcheck.ReaderConfig{Buckets: []string{bucket}})
}

// NewNoteNotifier returns the note-notifier function's handler: a lease.Consumer whose side
// effect POSTs each note.created event, signed, to the webhook with its Idempotency-Key, and
// which moves malformed and permanently refused messages to the configured dead-letter queue.
// The webhook URL and signing secret are read here, once, from the SSM parameters cfg names.
func NewNoteNotifier(cfg config.Notifier, d Deps) (*sqsbatch.Processor, error) {
	hookCfg, err := webhookConfig(d.SSM, cfg)
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", cfg.Name, err)
	}
	hook, err := notify.New(hookCfg)
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", cfg.Name, err)
	}
	c, err := lease.New(d.DynamoDB, hook, lease.Config{Config: idempotency.Config{Name: cfg.Name,
		Table: cfg.IdempotencyTable, Retention: cfg.Retention, Logger: d.Logger, Metrics: d.Metrics}})
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", cfg.Name, err)
	}
	payloads, err := payloadReader(d, cfg.PayloadBucket)
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", cfg.Name, err)
	}
	dlq, err := deadLetters(d, cfg.Name, cfg.DeadLetterQueueURL, cfg.PayloadBucket)
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", cfg.Name, err)
	}
	// A message starts only while one webhook call and its claim and completion still fit in
	// the invocation, so a slow receiver never times the whole batch out.
	return sqsbatch.NewFor(c.Engine(), sqsbatch.Config{Options: batch.Options{DeadlineMargin: notify.DefaultTimeout + 3*time.Second, DeadLetter: dlq},
		Payloads: payloads})
}

// NewStatement returns the statement function's handler: the app table's stream and the
// consumer's replay queue in one function (dynamodbbatch.Processor.Invoke), each change of an
// account item written as its statement line exactly once (package statement). An account is
// held behind a dead-lettered change (HoldGroup): its later lines wait, in order, until an
// operator discards the letter or redrives it to the replay queue (docs/runbook.md).
func NewStatement(cfg config.Consumer, d Deps) (Invoker, error) {
	payloads, err := payloadReader(d, cfg.PayloadBucket)
	if err != nil {
		return Invoker{}, fmt.Errorf("consumer %s: %w", cfg.Name, err)
	}
	dlq, err := deadLetters(d, cfg.Name, cfg.DeadLetterQueueURL, cfg.PayloadBucket)
	if err != nil {
		return Invoker{}, fmt.Errorf("consumer %s: %w", cfg.Name, err)
	}
	e, err := idempotency.New(d.DynamoDB, statement.Handler(cfg.AppTable),
		idempotency.Config{Name: cfg.Name, Table: cfg.IdempotencyTable, Retention: cfg.Retention,
			AfterDeadLetter: idempotency.HoldGroup, Logger: d.Logger, Metrics: d.Metrics})
	if err != nil {
		return Invoker{}, fmt.Errorf("consumer %s: %w", cfg.Name, err)
	}
	p, err := dynamodbbatch.New(e.Engine(), dynamodbbatch.Config{Options: batch.Options{DeadLetter: dlq},
		Replay: batch.ReplayConfig{Payloads: payloads, MaxReceiveCount: cfg.MaxReceiveCount}})
	if err != nil {
		return Invoker{}, fmt.Errorf("consumer %s: %w", cfg.Name, err)
	}
	return Invoker{p.Invoke}, nil
}

// Invoker is the handler of a function with more than one kind of event source: its Invoke
// reads the event as Lambda sent it (dynamodbbatch.Processor.Invoke tells a stream event from
// its replay queue's).
type Invoker struct {
	Invoke func(ctx context.Context, payload []byte) ([]byte, error)
}

// Handle runs Invoke on the event as it came.
func (h Invoker) Handle(ctx context.Context, ev json.RawMessage) (json.RawMessage, error) {
	return h.Invoke(ctx, ev)
}
