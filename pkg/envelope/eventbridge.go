package envelope

import (
	"context"
	"encoding/json"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/cloudevent"
)

// EventBridge decodes an EventBridge event that a rule delivered to the queue: the event's
// type is its detail-type, its source its source, its data its detail (in canonical JSON: keys
// sorted, no space). The key comes from fields of the detail, because EventBridge's id is new
// on every PutEvents call: a publisher that retries a PutEvents sends the same detail under a
// new id (and a new time), and only a key from the detail makes it a duplicate. Neither the id nor the time is in the payload
// hash, so that retry is a duplicate, not a conflict.
type EventBridge struct {
	// Key names the fields of the detail whose values, joined, name the logical event, as
	// dotted paths ("orderId", "order.id"); required. The key names one event, not an
	// aggregate: where one order has several events, their types share a key only if the
	// detail tells them apart (then name that field too).
	Key []string
	// GroupField names the detail field that is the event's subject (its aggregate). When
	// empty the subject is the message's MessageGroupId (the rule target's group).
	GroupField string
}

// Validate reports a decoder without a key.
func (d EventBridge) Validate() error {
	return fields{key: d.Key}.validate("EventBridge", "EventBridge's event id")
}

// Decode unwraps the event and picks its key from the detail.
func (d EventBridge) Decode(_ context.Context, msg events.SQSMessage) (cloudevent.Event, error) {
	if err := d.Validate(); err != nil {
		return cloudevent.Event{}, err
	}
	var e struct {
		DetailType string          `json:"detail-type"`
		Source     string          `json:"source"`
		Time       time.Time       `json:"time"`
		Detail     json.RawMessage `json:"detail"`
	}
	if err := json.Unmarshal([]byte(msg.Body), &e); err != nil {
		return cloudevent.Event{}, cloudevent.Malformed("body", "not an EventBridge event: %v", err)
	}
	if err := wellFormed("", []byte(msg.Body)); err != nil {
		return cloudevent.Event{}, err
	}
	switch {
	case e.DetailType == "":
		return cloudevent.Event{}, cloudevent.Malformed("detail-type", "missing; want an EventBridge event")
	case e.Source == "":
		return cloudevent.Event{}, cloudevent.Malformed("source", "missing; want an EventBridge event")
	case len(e.Detail) == 0:
		return cloudevent.Event{}, cloudevent.Malformed("detail", "missing; want an EventBridge event")
	}
	v, err := parse("detail", e.Detail)
	if err != nil {
		return cloudevent.Event{}, err
	}
	p, err := fields{key: d.Key, groupField: d.GroupField}.pick("detail", v)
	if err != nil {
		return cloudevent.Event{}, err
	}
	data, err := canonical(v)
	if err != nil {
		return cloudevent.Event{}, err
	}
	return cloudevent.Event{SpecVersion: cloudevent.SpecVersion, ID: p.key, Source: e.Source, Type: e.DetailType,
		Subject: group(msg, p.group), Time: e.Time, DataContentType: "application/json", Data: data}, nil
}
