package envelope

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/cloudevent"
)

// SNS decodes a notification that an SNS topic delivered to the queue, with raw message
// delivery on (the body is the published message) or off (the body is SNS's JSON envelope,
// which is unwrapped): both shapes are accepted, so switching the subscription's
// RawMessageDelivery needs no deploy. The published message must be JSON; it is the event's
// data (in canonical JSON: keys sorted, no space) and what the payload hash covers. The key comes from fields of the message, because
// SNS's MessageId is new on every Publish call: a publisher's retry is a new MessageId, and
// only a key from the message makes it a duplicate.
type SNS struct {
	// Key names the fields of the message whose values, joined, name the logical event, as
	// dotted paths; required.
	Key []string
	// TypeField names the message field holding the event type. When empty every event has
	// Type.
	TypeField string
	// Type is the event type when TypeField is empty.
	Type string
	// GroupField names the message field that is the event's subject. When empty the subject
	// is the message's MessageGroupId (a FIFO topic's group).
	GroupField string
	// Source is the event's source; optional. It is not taken from the envelope's TopicArn,
	// which a raw delivery does not carry: the same message must hash the same either way.
	Source string
}

// Validate reports a decoder without a key or a type.
func (d SNS) Validate() error {
	if err := (fields{key: d.Key}).validate("SNS", "SNS's MessageId"); err != nil {
		return err
	}
	if d.TypeField == "" && d.Type == "" {
		return fmt.Errorf("envelope: SNS has neither TypeField nor Type: the handler routes on the event type")
	}
	return nil
}

// Decode unwraps the envelope when there is one and picks the event's parts out of the message.
func (d SNS) Decode(_ context.Context, msg events.SQSMessage) (cloudevent.Event, error) {
	if err := d.Validate(); err != nil {
		return cloudevent.Event{}, err
	}
	where, data := "body", []byte(msg.Body)
	var env struct {
		Type      string  `json:"Type"`
		TopicArn  string  `json:"TopicArn"`
		MessageID string  `json:"MessageId"`
		Message   *string `json:"Message"`
	}
	if json.Unmarshal(data, &env) == nil && env.Type == "Notification" && env.TopicArn != "" && env.Message != nil {
		if err := wellFormed("", data); err != nil {
			return cloudevent.Event{}, err
		}
		where, data = "Message", []byte(*env.Message)
	}
	ev, err := decodeJSON(where, data, msg, fields{key: d.Key, typeField: d.TypeField, groupField: d.GroupField},
		d.Type, d.Source)
	if err != nil && env.MessageID != "" && where == "Message" {
		return cloudevent.Event{}, fmt.Errorf("sns notification %s: %w", env.MessageID, err)
	}
	return ev, err
}
