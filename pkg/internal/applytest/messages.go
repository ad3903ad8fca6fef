package applytest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/port"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// Time is the time of the events Message builds.
var Time = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

// Message builds an SQS FIFO message of group "group-1", received once, carrying a CloudEvent
// of eventID, typ and data.
func Message(t testing.TB, msgID, eventID, typ string, data any) events.SQSMessage {
	t.Helper()
	ev, err := cloudevent.New(eventID, "test", typ, "group-1", Time, data)
	if err != nil {
		t.Fatal(err)
	}
	body, err := cloudevent.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	return SQSMessage(msgID, string(body), 1)
}

// SQSMessage is a message of the FIFO queue test.fifo, group "group-1", with body, received
// receiveCount times.
func SQSMessage(msgID, body string, receiveCount int) events.SQSMessage {
	return events.SQSMessage{
		MessageId: msgID, Body: body, EventSource: "aws:sqs",
		EventSourceARN: "arn:aws:sqs:us-east-1:000000000000:test.fifo",
		Attributes: map[string]string{
			"MessageGroupId":          "group-1",
			"SequenceNumber":          "1000" + msgID,
			"ApproximateReceiveCount": strconv.Itoa(receiveCount),
		},
	}
}

// Redelivered is m as SQS delivers it again, its receiveCount-th receive.
func Redelivered(m events.SQSMessage, receiveCount int) events.SQSMessage {
	m.Attributes = map[string]string{"MessageGroupId": m.Attributes["MessageGroupId"],
		"SequenceNumber": m.Attributes["SequenceNumber"], "ApproximateReceiveCount": strconv.Itoa(receiveCount)}
	return m
}

// Redriven is m sent again by a redrive as message id: with the id it was first sent as.
func Redriven(m events.SQSMessage, id string) events.SQSMessage {
	first := m.MessageId
	m = Redelivered(m, 1)
	m.MessageId = id
	m.MessageAttributes = map[string]events.SQSMessageAttribute{deadletter.AttrOriginalMessageID: {DataType: "String", StringValue: &first}}
	return m
}

// Applier is what idempotency.Consumer and lease.Consumer have in common.
type Applier interface {
	Apply(ctx context.Context, ev cloudevent.Event, d port.Delivery) (idempotency.Result, error)
}

// Process applies an SQS message as the SQS port does: a body that is not a CloudEvent is
// malformed.
func Process(ctx context.Context, a Applier, msg events.SQSMessage) (idempotency.Result, error) {
	ev, err := cloudevent.Decode([]byte(msg.Body))
	if err != nil {
		return idempotency.Result{Outcome: idempotency.Malformed}, err
	}
	return a.Apply(ctx, ev, sqsbatch.DeliveryOf(msg))
}

// Unique is a name unique to the test and the run: an event id, a counter.
func Unique(t *testing.T) string { return fmt.Sprintf("%s-%s", t.Name(), testkit.Name("e")) }

// RefusesMalformedEvents applies decoded events no transport may have checked (no id, an id
// too long, no type) with a, and checks that each is malformed, permanent, names its field,
// and sends nothing to DynamoDB.
func RefusesMalformedEvents(t *testing.T, f *Fixture, a Applier) {
	t.Helper()
	ok, _ := cloudevent.New("ev-1", "test", "test.counted", "g", Time, Counted{Counter: "x", By: 1})
	noID, longID, noType := ok, ok, ok
	noID.ID, longID.ID, noType.Type = "", strings.Repeat("x", cloudevent.MaxIDLength+1), ""
	for _, tc := range []struct {
		name, field string
		ev          cloudevent.Event
	}{{"no id", "id", noID}, {"id too long", "id", longID}, {"no type", "type", noType}} {
		t.Run(tc.name, func(t *testing.T) {
			before := f.Requests.Total()
			res, err := a.Apply(context.Background(), tc.ev, port.Delivery{MessageID: "m1"})
			var me *cloudevent.MalformedError
			if res.Outcome != idempotency.Malformed || !idempotency.IsPermanent(err) || !errors.As(err, &me) || me.Field != tc.field {
				t.Fatalf("Apply = %+v, %v; want malformed in field %s, permanent", res, err, tc.field)
			}
			if n := f.Requests.Total() - before; n != 0 {
				t.Errorf("%d DynamoDB requests for a malformed event, want 0", n)
			}
		})
	}
}
