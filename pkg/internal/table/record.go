package table

import (
	"errors"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
)

// Retention is how long the engine keeps what it writes unless configured otherwise
// (idempotency.DefaultRetention): a record, and an operator's skip on a hold.
const Retention = 30 * 24 * time.Hour

// ErrChanged is matched by an error that reports a conditional write refused because the item
// changed since it was read (and shown): the engine's, after a hold or a count kept changing,
// and an operator's decision (operator.ErrChanged).
var ErrChanged = errors.New("changed since it was read")

// Status of a record written by the lease mode (operator.StatusInProgress, StatusCompleted).
const (
	StatusInProgress = "in-progress" // an owner holds the lease and is running the effect
	StatusCompleted  = "completed"   // the effect ran; Outcome says how
)

// discarded is the outcome an operator's discard stores (idempotency.Discarded), which
// Decides reads.
const discarded = "discarded"

// Record is the idempotency record: "consumer C processed event E", one item per consumer and
// event in the idempotency table, whose hash key is pk and whose TTL attribute is expiresAt.
// Package operator shows it as operator.Record.
type Record struct {
	Key            string `dynamodbav:"pk"`
	Consumer       string `dynamodbav:"consumer"`
	EventID        string `dynamodbav:"eventId"`
	EventType      string `dynamodbav:"eventType"`
	OccurredAt     string `dynamodbav:"occurredAt,omitempty"` // the event's time, RFC 3339
	ProcessedAt    string `dynamodbav:"processedAt"`          // RFC 3339, UTC
	Outcome        string `dynamodbav:"outcome"`              // applied or rejected
	Reason         string `dynamodbav:"reason,omitempty"`     // why it was rejected
	PayloadHash    string `dynamodbav:"payloadHash"`          // cloudevent.Event.PayloadHash
	MessageID      string `dynamodbav:"messageId"`            // the SQS message that was committed
	SequenceNumber string `dynamodbav:"sequenceNumber,omitempty"`
	ReceiveCount   int    `dynamodbav:"receiveCount,omitempty"`
	Group          string `dynamodbav:"messageGroup,omitempty"` // port.Delivery.Group
	ExpiresAt      int64  `dynamodbav:"expiresAt"`              // epoch seconds; expired records count as absent
	Payload        string `dynamodbav:"payload,omitempty"`      // the message body, when idempotency.Config.StorePayload (and for Discarded)

	// Discarded only: who decided, and the letter's message attributes (a JSON object).
	Operator   string `dynamodbav:"operator,omitempty"`
	Attributes string `dynamodbav:"attributes,omitempty"`

	// Lease mode only (lease.Consumer); empty on records of the transactional mode.
	Status         string `dynamodbav:"status,omitempty"`         // operator.StatusInProgress or StatusCompleted
	Owner          string `dynamodbav:"owner,omitempty"`          // random token of the lease holder, or of who completed
	LeaseExpiresAt int64  `dynamodbav:"leaseExpiresAt,omitempty"` // epoch milliseconds; removed on completion

	origin string // port.Delivery.OriginID, for the group's hold; not stored
}

// WithOrigin returns r knowing origin, the id its message was first sent as
// (port.Delivery.OriginID), by which its group's hold lists it. It is not stored.
func WithOrigin(r Record, origin string) Record {
	r.origin = origin
	return r
}

// Origin is the id r's message was first sent as, when WithOrigin gave it.
func Origin(r Record) string { return r.origin }

// Decides reports whether rec, a stored record, decides an event of payload hash at now: it is
// live (not expired), not a lease in progress, and of the same payload, or a discard whose
// payload the operator's tool could not read (it answers every payload of its id). A live
// record of another payload is a conflict, not a decision of this one.
func Decides(rec Record, hash string, now time.Time) bool {
	if rec.Key == "" || rec.ExpiresAt < now.Unix() || rec.Status == StatusInProgress {
		return false
	}
	return rec.PayloadHash == hash || rec.Outcome == discarded && rec.PayloadHash == ""
}

// AbsentCondition is true when no live record exists: none at all, or one whose expiry has
// passed but which TTL has not deleted yet. Behaviour never depends on when TTL runs.
func AbsentCondition(now time.Time) (expression.Expression, error) {
	cond := expression.Name(AttrKey).AttributeNotExists().
		Or(expression.Name(AttrExpiresAt).LessThan(expression.Value(now.Unix())))
	return expression.NewBuilder().WithCondition(cond).Build()
}

// RFC3339 is t as items keep a time: RFC 3339 in UTC, with nanoseconds; "" for the zero time.
func RFC3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// Truncate cuts s to at most n bytes at a character boundary, as items keep a text that may
// be long (a reason, a body).
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
