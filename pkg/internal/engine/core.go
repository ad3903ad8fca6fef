package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/internal/table"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/port"
)

// redelivered reports whether d may be a later delivery of an event decided meanwhile: one
// the transport delivered before (ReceiveCount above 1), or a redrive (Origin). The engine
// reads the event's record before its handler runs for these only: a first delivery reads
// nothing.
func redelivered(d port.Delivery) bool { return d.ReceiveCount > 1 || d.Origin != "" }

// mayBeListed reports whether d's group's hold may list d already, under HoldGroup: the port
// held it before applying it (HoldWritten), or it was delivered before (a backstop may have
// listed it then, by its message id, behind a group-mate on its last receives), or redriven
// (Origin), its first message held. Such a delivery answered without a commit of its own takes
// itself off the list (core.leave), so the cache does not answer it. A first delivery is on no
// list: it keeps the fast path (the cache, no hold read); so does every delivery under GoOn.
func (c *core) mayBeListed(d port.Delivery) bool {
	return c.HoldsGroups() && d.Group != "" && (d.HoldWritten || redelivered(d))
}

// Result says how applying one event ended.
type Result struct {
	Outcome Outcome
	Key     string // idempotency key; empty when the event had no usable id
	EventID string
	Reason  string        // the rejection reason, for Rejected (also for a duplicate of a rejection); why, for Ignored
	Stored  Outcome       // for Duplicate: the outcome stored by the first processing; empty when a write marked OrDuplicate recognised it
	Commit  time.Duration // time spent in DynamoDB calls
}

// core is what both modes share: configuration, the cache, the record, the duplicate and
// conflict decisions, and the one log line and metric per event.
type core struct {
	db    DB
	cfg   Config
	cache *cache
}

func newCore(db DB, cfg Config) (core, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return core{}, fmt.Errorf("idempotency config: %w", err)
	}
	if db == nil {
		return core{}, errors.New("idempotency: a DB is required")
	}
	return core{db: retried{db: db, retry: cfg.Retry}, cfg: cfg, cache: newCache(cfg.CacheSize)}, nil // retried.go: the one retry layer
}

// Name is the consumer name.
func (c *core) Name() string { return c.cfg.Name }

// start checks the event, and answers from the cache when this environment has seen it
// committed: done is true then.
func (c *core) start(ev cloudevent.Event, d port.Delivery) (res Result, hash string, done bool, err error) {
	switch {
	case ev.ID == "":
		return Result{Outcome: Malformed}, "", true, cloudevent.Malformed("id", "missing; the publisher must set a stable event id")
	case len(ev.ID) > cloudevent.MaxIDLength:
		return Result{Outcome: Malformed}, "", true, cloudevent.Malformed("id", "is %d bytes; at most %d", len(ev.ID), cloudevent.MaxIDLength)
	case ev.Type == "":
		return Result{Outcome: Malformed}, "", true, cloudevent.Malformed("type", "missing")
	}
	res = Result{Key: table.Key(c.cfg.Name, ev.ID), EventID: ev.ID}
	hash = ev.PayloadHash()
	if hit, ok := c.cache.get(res.Key, c.cfg.Now()); ok && !c.mayBeListed(d) {
		res = c.known(res, hit.hash, hit.outcome, hit.reason, hash)
		return res, hash, true, c.conflictErr(res, hit.hash, hash)
	}
	return res, hash, false, nil
}

// applyOnce runs apply for ev and logs and counts its outcome once: the body of both modes'
// Apply.
func (c *core) applyOnce(ctx context.Context, ev cloudevent.Event, d port.Delivery, apply func() (Result, error)) (Result, error) {
	start := time.Now()
	res, err := apply()
	c.report(ctx, ev, d, res, err, time.Since(start))
	return res, err
}

// known turns an existing record (its payload hash, outcome and reason) into a result.
// The stored hash is the same payload's when it is hash. A discarded event whose payload the operator's tool
// could not hash (a letter without the consumer's hash whose body is not a CloudEvent) has no
// hash: every delivery of its id is answered as it.
func (c *core) known(res Result, storedHash string, stored Outcome, reason, hash string) Result {
	if storedHash != hash && (stored != Discarded || storedHash != "") {
		res.Outcome = Conflict
		return res
	}
	res.Outcome, res.Stored, res.Reason = Duplicate, stored, reason
	return res
}

func (c *core) conflictErr(res Result, storedHash, hash string) error {
	if res.Outcome != Conflict {
		return nil
	}
	return &ConflictError{Key: res.Key, StoredHash: storedHash, PayloadHash: hash}
}

func (c *core) record(ev cloudevent.Event, d port.Delivery, hash string, now time.Time) table.Record {
	rec := table.Record{
		Key:            table.Key(c.cfg.Name, ev.ID),
		Consumer:       c.cfg.Name,
		EventID:        ev.ID,
		EventType:      ev.Type,
		OccurredAt:     table.RFC3339(ev.Time),
		ProcessedAt:    table.RFC3339(now),
		Outcome:        string(Applied),
		PayloadHash:    hash,
		MessageID:      d.MessageID,
		SequenceNumber: d.SequenceNumber,
		ReceiveCount:   d.ReceiveCount,
		Group:          d.Group,
		ExpiresAt:      now.Add(c.cfg.Retention).Unix(),
	}
	rec = table.WithOrigin(rec, d.OriginID()) // for its group's hold; not stored
	if c.cfg.StorePayload {
		rec.Payload = d.Body
		if rec.Payload == "" {
			body, _ := cloudevent.Encode(ev) // an event that was decoded encodes again
			rec.Payload = string(body)
		}
	}
	return rec
}

// existing classifies a live record found by a failed condition: the same payload is a
// duplicate, another payload a conflict.
func (c *core) existing(ctx context.Context, res Result, old map[string]types.AttributeValue, hash string) (Result, error) {
	if old == nil { // ALL_OLD not honoured: read the record (consistently) instead
		var err error
		if old, err = c.read(ctx, &res, res.Key); err != nil {
			res.Outcome = Failed
			return res, err
		}
		if old == nil { // gone since its condition failed (TTL, a release): try again
			res.Outcome = Failed
			return res, fmt.Errorf("record %s vanished after its condition failed; a delivery again will apply or find it", res.Key)
		}
	}
	var stored table.Record
	if err := attributevalue.UnmarshalMap(old, &stored); err != nil {
		res.Outcome = Failed
		return res, fmt.Errorf("decode record %s: %w", res.Key, err)
	}
	res = c.known(res, stored.PayloadHash, Outcome(stored.Outcome), stored.Reason, hash)
	if res.Outcome == Duplicate {
		c.remember(stored, Outcome(stored.Outcome), stored.Reason)
	}
	return res, c.conflictErr(res, stored.PayloadHash, hash)
}

// read reads the record consistently; nil when there is none.
func (c *core) read(ctx context.Context, res *Result, key string) (map[string]types.AttributeValue, error) {
	start := time.Now()
	callCtx, cancel := c.cfg.Retry.bound(ctx)
	defer cancel()
	out, err := c.db.GetItem(callCtx, &dynamodb.GetItemInput{TableName: aws.String(c.cfg.Table),
		Key: table.ItemKey(key), ConsistentRead: aws.Bool(true)}, c.cfg.Retry.single)
	res.Commit += time.Since(start)
	if err != nil {
		return nil, fmt.Errorf("read record %s: %w", key, err)
	}
	return out.Item, nil
}

func (c *core) remember(rec table.Record, outcome Outcome, reason string) {
	c.cache.put(cacheEntry{key: rec.Key, hash: rec.PayloadHash, outcome: outcome, reason: reason,
		expiresAt: time.Unix(rec.ExpiresAt, 0)})
}

// report logs the outcome once, with the fields a person needs to find the message, and
// counts it.
func (c *core) report(ctx context.Context, ev cloudevent.Event, d port.Delivery, res Result, err error, took time.Duration) {
	attrs := []slog.Attr{
		slog.String("consumer", c.cfg.Name),
		slog.String("messageId", d.MessageID),
		slog.String("eventId", ev.ID),
		slog.String("eventType", ev.Type),
		slog.String("idempotency_key", table.Key(c.cfg.Name, ev.ID)),
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
		if IsPermanent(err) {
			level = slog.LevelError
		}
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	c.cfg.Logger.LogAttrs(ctx, level, "message "+string(res.Outcome), attrs...)

	c.cfg.Metrics.Count(metricName[res.Outcome], 1)
	if res.Commit > 0 {
		c.cfg.Metrics.Observe(metrics.CommitLatency, res.Commit)
	}
}

var metricName = map[Outcome]string{
	Applied: metrics.Applied, Duplicate: metrics.Duplicate, Rejected: metrics.Rejected,
	Conflict: metrics.Conflict, Malformed: metrics.Malformed, Failed: metrics.Failed, Ignored: metrics.Ignored,
}
