package envelope

import (
	"context"
	"fmt"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/cloudevent"
)

// JSON decodes a body that is a plain JSON document, your own services' shape: the key, the
// type and the group are fields of it that you name, and the whole body is the event's data
// (and what the payload hash covers), in canonical JSON: keys sorted, no space.
type JSON struct {
	// Key names the fields whose values, joined, name the logical event, as dotted paths
	// ("orderId", "order.id", "lines.0.sku"); required. Take it from the payload (an order id
	// with what happened to it, a payment reference), never from a per-send id.
	Key []string
	// TypeField names the field holding the event type. When empty every event has Type.
	TypeField string
	// Type is the event type when TypeField is empty.
	Type string
	// GroupField names the field that is the event's subject (its aggregate). When empty the
	// subject is the message's MessageGroupId.
	GroupField string
	// TimeField names an RFC 3339 timestamp field for the event's time; optional.
	TimeField string
	// Source is the event's source, the producer's name; optional.
	Source string
}

// Validate reports a decoder without a key or a type.
func (d JSON) Validate() error {
	if err := (fields{key: d.Key}).validate("JSON", "a per-send message id"); err != nil {
		return err
	}
	if d.TypeField == "" && d.Type == "" {
		return fmt.Errorf("envelope: JSON has neither TypeField nor Type: the handler routes on the event type")
	}
	return nil
}

// Decode picks the event's parts out of the body.
func (d JSON) Decode(_ context.Context, msg events.SQSMessage) (cloudevent.Event, error) {
	if err := d.Validate(); err != nil {
		return cloudevent.Event{}, err
	}
	return decodeJSON("body", []byte(msg.Body), msg, fields{key: d.Key, typeField: d.TypeField,
		groupField: d.GroupField, timeAt: d.TimeField}, d.Type, d.Source)
}

// decodeJSON builds the event whose data is the JSON document data, in canonical form.
func decodeJSON(where string, data []byte, msg events.SQSMessage, f fields, typ, source string) (cloudevent.Event, error) {
	v, err := parse(where, data)
	if err != nil {
		return cloudevent.Event{}, err
	}
	p, err := f.pick(where, v)
	if err != nil {
		return cloudevent.Event{}, err
	}
	if p.typ != "" {
		typ = p.typ
	}
	canon, err := canonical(v)
	if err != nil {
		return cloudevent.Event{}, err
	}
	return cloudevent.Event{SpecVersion: cloudevent.SpecVersion, ID: p.key, Source: source, Type: typ,
		Subject: group(msg, p.group), Time: p.time, DataContentType: "application/json", Data: canon}, nil
}
