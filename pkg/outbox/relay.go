package outbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/onceflow/onceflow/pkg/internal/denied"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/publish"
)

// BatchSender sends messages to one queue in order and returns one error per message (nil when
// sent). *publish.Publisher implements it. Implementations must be safe for concurrent use.
type BatchSender interface {
	SendBatch(ctx context.Context, queueURL string, msgs []publish.Message) []error
}

// RelayConfig configures a Relay. Sender, Routes and ParkQueue are required.
type RelayConfig struct {
	Sender BatchSender
	// Routes maps an event type to the URLs of every queue that receives it.
	Routes map[string][]string
	// ParkQueue is the URL of the FIFO queue where the relay parks an outbox item it can never
	// send (its body, subject or event id holds what SQS refuses), so that it neither blocks
	// its stream shard nor vanishes: one message per item, holding the reason, the stream
	// sequence number, the event's id, type and subject and its body in base64.
	ParkQueue string
	Logger    *slog.Logger     // default: slog.Default()
	Metrics   metrics.Recorder // default metrics.Discard; flushed after every batch when it buffers
}

// Validate reports every problem of c.
func (c RelayConfig) Validate() error {
	var errs []error
	if c.Sender == nil {
		errs = append(errs, errors.New("relay: sender is required"))
	}
	if len(c.Routes) == 0 {
		errs = append(errs, errors.New("relay: routes are required"))
	}
	if c.ParkQueue == "" {
		errs = append(errs, errors.New("relay: park queue is required"))
	}
	for typ, urls := range c.Routes {
		if len(urls) == 0 || slices.Contains(urls, "") {
			errs = append(errs, fmt.Errorf("relay: route %s has an empty queue url", typ))
		}
	}
	return errors.Join(errs...)
}

// Relay publishes new outbox items from a table's stream. It is safe for concurrent use.
type Relay struct {
	cfg RelayConfig
}

// NewRelay returns a Relay, or the problems of cfg.
func NewRelay(cfg RelayConfig) (*Relay, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = metrics.Discard
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Relay{cfg: cfg}, nil
}

// pending is one message to send for the record at index rec.
type pending struct {
	rec int
	msg publish.Message
}

// Handle publishes the outbox items inserted by the stream records and reports as failed the
// first record that could not be published in full, and every record after it: Lambda resumes
// the shard from the lowest failed sequence number, and per-group order is kept because no
// later record is sent to a queue after a failure on it. Order survives an outage of any length
// only if the event source mapping never gives a record up (MaximumRetryAttempts and
// MaximumRecordAgeInSeconds -1, as this project's template sets): a record that fails every
// time (no route, undecodable) then holds its shard until it is fixed. Records that are not outbox
// inserts are skipped. An item SQS would refuse (see CheckText; a subject or event id that is
// not a valid group or deduplication id) is never retried: it is parked in ParkQueue with the
// reason, counted as metrics.Parked, and the records after it go on (later events of its
// aggregate too: parking is a dead letter, the policy of a consumer's dead-letter queue).
// Each message carries the item's trace header as its AWSTraceHeader (see WithTrace).
func (r *Relay) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	defer func() { _ = metrics.Flush(r.cfg.Metrics) }()
	byQueue := map[string][]pending{}
	var parks []toPark
	failed := make([]error, len(ev.Records))
	for i, rec := range ev.Records {
		item, ok, err := outboxItem(rec)
		if err != nil {
			failed[i] = err
			continue
		}
		if !ok {
			continue
		}
		urls, routed := r.cfg.Routes[item.EventType]
		if !routed {
			failed[i] = fmt.Errorf("event type %q has no route", item.EventType)
			continue
		}
		if err := unsendable(item); err != nil {
			parks = append(parks, toPark{rec: i, item: item, reason: err})
			continue
		}
		msg := item.message()
		for _, url := range urls {
			byQueue[url] = append(byQueue[url], pending{rec: i, msg: msg})
		}
	}
	r.park(ctx, ev.Records, parks, failed)
	for _, url := range slices.Sorted(maps.Keys(byQueue)) {
		r.send(ctx, url, byQueue[url], failed)
	}
	return r.response(ctx, ev, failed), nil
}

func (r *Relay) send(ctx context.Context, url string, ps []pending, failed []error) {
	// A record that already failed (on another queue or in decoding) and everything after it
	// is retried from there, so nothing from it on is sent to this queue either.
	first := len(failed)
	for i, err := range failed {
		if err != nil {
			first = i
			break
		}
	}
	var msgs []publish.Message
	var recs []int
	for _, p := range ps {
		if p.rec >= first {
			break
		}
		msgs, recs = append(msgs, p.msg), append(recs, p.rec)
	}
	reported := false
	for i, err := range r.cfg.Sender.SendBatch(ctx, url, msgs) {
		if err != nil {
			failed[recs[i]] = errors.Join(failed[recs[i]], err)
			r.cfg.Metrics.Count(metrics.PublishFailed, 1)
			if !reported {
				reported = r.denied(ctx, err, "sending outbox events", slog.String("queue", url))
			}
			continue
		}
		r.cfg.Metrics.Count(metrics.Published, 1)
	}
}

// denied reports err once, at ERROR with the permission it names, and counts
// metrics.AccessDenied, when it is an access denial (denied.Of): the relay's role may
// not send there. The records are retried as for any failure, in order, until it may.
func (r *Relay) denied(ctx context.Context, err error, during string, attrs ...slog.Attr) bool {
	denial, ok := denied.Of(err)
	if ok {
		denied.Log(ctx, r.cfg.Logger, r.cfg.Metrics, denial, during,
			append(attrs, slog.String("outcome", "records retried from the first not sent"))...)
	}
	return ok
}

func (r *Relay) response(ctx context.Context, ev events.DynamoDBEvent, failed []error) events.DynamoDBEventResponse {
	resp := events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{}}
	for i, err := range failed {
		if err == nil && len(resp.BatchItemFailures) == 0 {
			continue
		}
		seq := ev.Records[i].Change.SequenceNumber
		if err != nil {
			r.cfg.Logger.ErrorContext(ctx, "outbox record not published", "sequenceNumber", seq, "error", err)
		}
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: seq})
	}
	return resp
}

// outboxItem decodes the outbox item a record inserted; ok is false for any other record.
func outboxItem(rec events.DynamoDBEventRecord) (Item, bool, error) {
	img := rec.Change.NewImage
	if rec.EventName != string(events.DynamoDBOperationTypeInsert) || img == nil {
		return Item{}, false, nil
	}
	if k, ok := img["kind"]; !ok || k.DataType() != events.DataTypeString || k.String() != Kind {
		return Item{}, false, nil
	}
	var item Item
	if err := attributevalue.UnmarshalMap(FromStreamImage(img), &item); err != nil {
		return Item{}, true, fmt.Errorf("decode outbox item: %w", err)
	}
	if item.EventID == "" || item.Subject == "" || item.Body == "" {
		return Item{}, true, fmt.Errorf("outbox item %q lacks eventId, subject or body", item.PK)
	}
	return item, true, nil
}
