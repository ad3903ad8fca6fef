package outbox

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/publish"
)

// ParkGroup is the MessageGroupId of every message in the park queue.
const ParkGroup = "outbox-parked"

// Parked is the JSON body of a message in the park queue: an outbox item the relay can never
// send, and why. Every field is text SQS accepts; Body is the item's body in base64.
type Parked struct {
	Reason         string `json:"reason"`
	SequenceNumber string `json:"sequenceNumber"` // of the stream record
	EventID        string `json:"eventId"`
	EventType      string `json:"eventType"`
	Subject        string `json:"subject"`
	Body           string `json:"body"`
	ParkedAt       string `json:"parkedAt"` // RFC 3339
}

// unsendable reports why SQS would refuse the message of item, or nil: a body past SQS's size
// limit (publish.MaxMessageBytes; an item written to DynamoDB, at most 400 KB, is always under
// it) or with characters it refuses, or a subject or event id that is not a valid
// MessageGroupId or MessageDeduplicationId (1 to 128 ASCII letters, digits and punctuation).
func unsendable(item Item) error {
	if n := len(item.Body); n > publish.MaxMessageBytes {
		return fmt.Errorf("body: %d bytes, more than SQS takes in a message (%d)", n, publish.MaxMessageBytes)
	}
	if err := CheckText(item.Body); err != nil {
		return fmt.Errorf("body: %w", err)
	}
	for name, v := range map[string]string{"subject (MessageGroupId)": item.Subject, "eventId (MessageDeduplicationId)": item.EventID} {
		if len(v) > 128 {
			return fmt.Errorf("%s: longer than 128 characters", name)
		}
		for i, r := range v {
			if r < 0x21 || r > 0x7e {
				return fmt.Errorf("%s: character %U at byte %d, which SQS refuses in it", name, r, i)
			}
		}
	}
	return nil
}

// toPark is an outbox item of the record at index rec that the relay parks.
type toPark struct {
	rec    int
	item   Item
	reason error
}

// park sends each item to the park queue; a record whose item could not be parked is failed,
// so that it is retried rather than lost.
func (r *Relay) park(ctx context.Context, recs []events.DynamoDBEventRecord, ps []toPark, failed []error) {
	if len(ps) == 0 {
		return
	}
	msgs := make([]publish.Message, len(ps))
	for i, p := range ps {
		body := parkedBody(Parked{Reason: p.reason.Error(), SequenceNumber: recs[p.rec].Change.SequenceNumber,
			EventID: p.item.EventID, EventType: p.item.EventType, Subject: p.item.Subject,
			Body: base64.StdEncoding.EncodeToString([]byte(p.item.Body)), ParkedAt: time.Now().UTC().Format(time.RFC3339Nano)})
		sum := sha256.Sum256([]byte(p.item.Subject + "\x00" + p.item.EventID))
		msgs[i] = publish.Message{GroupID: ParkGroup, DedupID: "parked-" + hex.EncodeToString(sum[:20]), Body: body}
	}
	reported := false
	for i, err := range r.cfg.Sender.SendBatch(ctx, r.cfg.ParkQueue, msgs) {
		p := ps[i]
		if err != nil {
			failed[p.rec] = fmt.Errorf("park outbox item %q (%v): %w", p.item.PK, p.reason, err)
			if !reported {
				reported = r.denied(ctx, err, "parking outbox items", slog.String("queue", r.cfg.ParkQueue))
			}
			continue
		}
		r.cfg.Metrics.Count(metrics.Parked, 1)
		r.cfg.Logger.ErrorContext(ctx, "outbox item parked: SQS refuses it", "eventId", p.item.EventID, "eventType", p.item.EventType,
			"subject", p.item.Subject, "sequenceNumber", recs[p.rec].Change.SequenceNumber, "reason", p.reason, "parkQueue", r.cfg.ParkQueue)
	}
}

// parkedBody encodes p for the park queue, leaving its body out (and saying so in its reason)
// when the message would be past SQS's size limit: the item stays in the table, where its key
// and the stream's sequence number find it.
func parkedBody(p Parked) string {
	body, err := json.Marshal(p)
	if err != nil {
		return `{"reason":"unencodable"}`
	}
	if body = safeJSON(body); len(body) <= publish.MaxMessageBytes {
		return string(body)
	}
	p.Reason += fmt.Sprintf("; body left out: %d bytes in base64, more than the park message takes", len(p.Body))
	p.Body = ""
	if body, err = json.Marshal(p); err != nil {
		return `{"reason":"unencodable"}`
	}
	return string(safeJSON(body))
}
