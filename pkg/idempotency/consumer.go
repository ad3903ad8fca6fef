package idempotency

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/metrics"
)

// DB is the part of the DynamoDB API the engine uses; *dynamodb.Client implements it.
// Implementations must be safe for concurrent use.
type DB interface {
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

// DefaultRetention outlives every redelivery path of this project's queues: a message can wait
// 4 days on its queue, 14 in its FIFO dead-letter queue (moving it there resets its enqueue
// time) and, redriven, 4 more on its queue: 22 days. Queues kept longer need a longer
// retention: source retention twice plus dead-letter retention, at most 42 days on SQS.
const DefaultRetention = 30 * 24 * time.Hour

// Config configures a Consumer. Name and Table are required; the zero value of every other
// field means its default.
type Config struct {
	Name  string // consumer name, part of every key: two consumers of one event each apply it once
	Table string // idempotency table: hash key pk (S), TTL on expiresAt

	// Retention is how long a record keeps a redelivery a duplicate. Default DefaultRetention.
	// An event redelivered after its record expired is applied again: keep it longer than the
	// queue's retention plus the time a message may wait in a dead-letter queue.
	Retention time.Duration
	// KeyAttributes names the attributes that form the key of items an effect Puts, used to
	// find two writes to one item before calling DynamoDB. Default pk and sk.
	KeyAttributes []string
	// CacheSize bounds the in-memory cache of keys committed by this environment. Default
	// 1024; negative disables it.
	CacheSize int
	// StorePayload also stores the message body in the record, for audits and replays.
	StorePayload bool
	Retry        Retry
	Logger       *slog.Logger      // default slog.Default()
	Metrics      *metrics.Recorder // nil records nothing
	Now          func() time.Time  // default time.Now
}

func (c Config) withDefaults() Config {
	if c.Retention == 0 {
		c.Retention = DefaultRetention
	}
	if len(c.KeyAttributes) == 0 {
		c.KeyAttributes = []string{"pk", "sk"}
	}
	if c.CacheSize == 0 {
		c.CacheSize = 1024
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	c.Retry = c.Retry.withDefaults()
	return c
}

// Validate reports every problem with c.
func (c Config) Validate() error {
	var errs []error
	if c.Name == "" {
		errs = append(errs, errors.New("consumer name is required (Config.Name)"))
	}
	if strings.Contains(c.Name, keySeparator) {
		errs = append(errs, fmt.Errorf("consumer name %q contains %q, which separates it from the event id in keys; choose a name without it", c.Name, keySeparator))
	}
	if c.Table == "" {
		errs = append(errs, errors.New("idempotency table is required (Config.Table)"))
	}
	if c.Retention < 0 {
		errs = append(errs, fmt.Errorf("retention %v is negative", c.Retention))
	}
	return errors.Join(errs...)
}

// Consumer applies events to DynamoDB exactly once: it is the idempotent consumer. It is
// safe for concurrent use by many goroutines.
type Consumer struct {
	db      DB
	handler Handler
	cfg     Config
	cache   *cache
}

// New returns a Consumer committing the effects handler decides.
func New(db DB, handler Handler, cfg Config) (*Consumer, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("idempotency config: %w", err)
	}
	if db == nil || handler == nil {
		return nil, errors.New("idempotency: a DB and a Handler are required")
	}
	return &Consumer{db: db, handler: handler, cfg: cfg, cache: newCache(cfg.CacheSize)}, nil
}

// Name is the consumer name.
func (c *Consumer) Name() string { return c.cfg.Name }

// Result says how processing one message ended.
type Result struct {
	Outcome Outcome
	Key     string // idempotency key; empty when the message had no usable event id
	EventID string
	Reason  string        // the rejection reason, for Rejected (also for a duplicate of a rejection)
	Stored  Outcome       // for Duplicate: the outcome stored by the first processing
	Commit  time.Duration // time spent in DynamoDB calls
}

// HandleMessage processes one SQS message, for the batch processor. It returns nil when the
// message is done with (applied, duplicate, rejected), an error with Permanent() true when it
// can never succeed (malformed, conflict, invalid effect), and any other error when a
// redelivery may succeed.
func (c *Consumer) HandleMessage(ctx context.Context, msg events.SQSMessage) error {
	_, err := c.Process(ctx, msg)
	return err
}

// Process processes one SQS message and logs and counts its outcome, once.
func (c *Consumer) Process(ctx context.Context, msg events.SQSMessage) (Result, error) {
	start := time.Now()
	res, ev, err := c.process(ctx, msg)
	c.report(ctx, msg, ev, res, err, time.Since(start))
	return res, err
}

func (c *Consumer) process(ctx context.Context, msg events.SQSMessage) (Result, cloudevent.Event, error) {
	ev, err := cloudevent.Decode([]byte(msg.Body))
	if err != nil {
		return Result{Outcome: Malformed}, ev, err
	}
	res := Result{Key: Key(c.cfg.Name, ev.ID), EventID: ev.ID}
	hash := ev.PayloadHash()
	now := c.cfg.Now()
	if hit, ok := c.cache.get(res.Key, now); ok {
		return c.known(res, hit.hash, hit.outcome, hit.reason, hash), ev, c.conflictErr(res.Key, hit.hash, hash)
	}
	effect, err := c.handler.Effect(ctx, ev)
	if err != nil {
		if errors.Is(err, cloudevent.ErrMalformed) {
			res.Outcome = Malformed
			return res, ev, err
		}
		res.Outcome = Failed
		return res, ev, fmt.Errorf("decide effect of %s %s: %w", ev.Type, ev.ID, err)
	}
	rec := c.record(ev, msg, hash, now)
	if err := effect.check(ev.Type, c.cfg.KeyAttributes, itemRef{c.cfg.Table, canonicalKey(rec.key())}); err != nil {
		res.Outcome = Failed
		return res, ev, err
	}
	res, err = c.commit(ctx, res, effect, rec)
	return res, ev, err
}

// known turns an existing record (its payload hash, outcome and reason) into a result.
func (c *Consumer) known(res Result, storedHash string, stored Outcome, reason, hash string) Result {
	if storedHash != hash {
		res.Outcome = Conflict
		return res
	}
	res.Outcome, res.Stored, res.Reason = Duplicate, stored, reason
	return res
}

func (c *Consumer) conflictErr(key, storedHash, hash string) error {
	if storedHash == hash {
		return nil
	}
	return &ConflictError{Key: key, StoredHash: storedHash, PayloadHash: hash}
}

func (c *Consumer) record(ev cloudevent.Event, msg events.SQSMessage, hash string, now time.Time) Record {
	rec := Record{
		Key:            Key(c.cfg.Name, ev.ID),
		Consumer:       c.cfg.Name,
		EventID:        ev.ID,
		EventType:      ev.Type,
		OccurredAt:     rfc3339(ev.Time),
		ProcessedAt:    rfc3339(now),
		Outcome:        string(Applied),
		PayloadHash:    hash,
		MessageID:      msg.MessageId,
		SequenceNumber: msg.Attributes["SequenceNumber"],
		ExpiresAt:      now.Add(c.cfg.Retention).Unix(),
	}
	rec.ReceiveCount, _ = strconv.Atoi(msg.Attributes["ApproximateReceiveCount"])
	if c.cfg.StorePayload {
		rec.Payload = msg.Body
	}
	return rec
}

// report logs the outcome once, with the fields a person needs to find the message, and
// counts it.
func (c *Consumer) report(ctx context.Context, msg events.SQSMessage, ev cloudevent.Event, res Result, err error, took time.Duration) {
	attrs := []slog.Attr{
		slog.String("consumer", c.cfg.Name),
		slog.String("messageId", msg.MessageId),
		slog.String("eventId", ev.ID),
		slog.String("eventType", ev.Type),
		slog.String("outcome", string(res.Outcome)),
		slog.Float64("durationMs", float64(took)/float64(time.Millisecond)),
		slog.Float64("commitMs", float64(res.Commit)/float64(time.Millisecond)),
	}
	if res.Reason != "" {
		attrs = append(attrs, slog.String("reason", res.Reason))
	}
	if res.Stored != "" {
		attrs = append(attrs, slog.String("stored", string(res.Stored)))
	}
	level := slog.LevelInfo
	switch res.Outcome {
	case Conflict, Malformed:
		level = slog.LevelError
	case Failed:
		level = slog.LevelWarn
		if errors.Is(err, ErrInvalidEffect) {
			level = slog.LevelError
		}
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	c.cfg.Logger.LogAttrs(ctx, level, "message "+string(res.Outcome), attrs...)

	m := c.cfg.Metrics
	m.Count(metricName[res.Outcome], 1)
	if res.Commit > 0 {
		m.Observe(metrics.CommitLatency, res.Commit)
	}
}

var metricName = map[Outcome]string{
	Applied: metrics.Applied, Duplicate: metrics.Duplicate, Rejected: metrics.Rejected,
	Conflict: metrics.Conflict, Malformed: metrics.Malformed, Failed: metrics.Failed,
}
