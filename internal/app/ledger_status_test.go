package app_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/internal/app"
	"github.com/onceflow/onceflow/internal/apptest"
	"github.com/onceflow/onceflow/internal/config"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/outbox"
)

// post sends an API sample with body and returns the status, the event id and the Location.
func (s *system) post(t *testing.T, sample, body string) (int, string, string) {
	t.Helper()
	var req events.APIGatewayV2HTTPRequest
	apptest.LoadEvent(t, sample, &req)
	req.Body = body
	resp, err := s.api.Handle(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, between(resp.Body, `"eventId":"`, `"`), resp.Headers["Location"]
}

// sampleAccount is the account of the movement samples (events/api-credit.json, api-debit.json).
const sampleAccount = "acc-1001"

// deliver hands the outbox event of eventID to the ledger as an SQS message, as the relay and
// the queue would, with the given receive count.
func (s *system) deliver(t *testing.T, eventID string, receiveCount int) {
	t.Helper()
	s.deliverWith(t, eventID, receiveCount, nil)
}

// deliverWith is deliver with the message's body changed by edit (nil: as written).
func (s *system) deliverWith(t *testing.T, eventID string, receiveCount int, edit func(body string) string) {
	t.Helper()
	out, err := s.db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(s.app),
		Key: outbox.Key(sampleAccount, eventID), ConsistentRead: aws.Bool(true)})
	if err != nil || out.Item == nil {
		t.Fatalf("outbox item %s: %v %v", eventID, out, err)
	}
	var item outbox.Item
	if err := attributevalue.UnmarshalMap(out.Item, &item); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		item.Body = edit(item.Body)
	}
	msg := events.SQSMessage{MessageId: eventID + "-" + strconv.Itoa(receiveCount), Body: item.Body,
		EventSource: "aws:sqs", EventSourceARN: "arn:aws:sqs:us-east-1:000000000000:ledger.fifo",
		Attributes: map[string]string{"MessageGroupId": item.Subject, "SequenceNumber": "1",
			"ApproximateReceiveCount": strconv.Itoa(receiveCount)}}
	// A fresh processor: a redelivery usually reaches another execution environment, whose
	// in-memory cache has not seen the event.
	ledger, err := app.NewLedger(config.Consumer{Name: "ledger", AppTable: s.app, IdempotencyTable: s.idem,
		DeadLetterQueueURL: s.ledgerDLQ, Retention: config.DefaultRetention},
		app.Deps{DynamoDB: s.db, SQS: s.sqs, Logger: slog.New(slog.NewJSONHandler(s.logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	handle(t, ledger, events.SQSEvent{Records: []events.SQSMessage{msg}})
}

// expireRecord deletes the ledger's idempotency record of eventID, as TTL does after the
// retention.
func (s *system) expireRecord(t *testing.T, eventID string) {
	t.Helper()
	key := operator.Key("ledger", eventID)
	if _, err := s.db.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(s.idem),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: key}}}); err != nil {
		t.Fatal(err)
	}
}

func (s *system) status(t *testing.T, location string) map[string]any {
	t.Helper()
	code, body := s.get(t, location)
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); code != http.StatusOK || err != nil {
		t.Fatalf("GET %s = %d %s; want 200", location, code, body)
	}
	return m
}

func TestLedger_a_credit_delivered_again_after_its_record_expired_is_a_duplicate(t *testing.T) {
	s := newSystem(t)
	_, id, loc := s.post(t, "api-credit.json", `{"amount":5000,"reference":"invoice-1"}`)
	s.deliver(t, id, 1)
	s.expireRecord(t, id)
	s.logs.Reset()
	s.deliver(t, id, 2)

	if _, body := s.get(t, "/accounts/acc-1001"); !strings.Contains(body, `"balance":5000`) || strings.Count(body, `"eventId"`) != 1 {
		t.Fatalf("account = %s; want balance 5000 and one entry", body)
	}
	if !strings.Contains(s.logs.String(), `"outcome":"duplicate"`) {
		t.Fatalf("logs = %s; want the redelivery reported as a duplicate", s.logs)
	}
	if got := s.status(t, loc); got["status"] != "applied" {
		t.Fatalf("status = %v; want applied", got)
	}
}

func TestLedger_a_rejected_debit_stays_rejected_at_its_status(t *testing.T) {
	s := newSystem(t)
	status, debit, loc := s.post(t, "api-debit.json", `{"amount":1200,"reference":"order-1"}`)
	if status != http.StatusAccepted || loc != "/accounts/acc-1001/movements/order-1" {
		t.Fatalf("debit = %d at %q; want 202 with its status location", status, loc)
	}
	s.deliver(t, debit, 1)
	want := map[string]any{"eventId": debit, "status": "rejected", "reason": "insufficient funds", "at": "2026-11-30T06:00:00Z"}
	check := func(when string) {
		got := s.status(t, loc)
		for k, v := range want {
			if k != "at" && got[k] != v {
				t.Fatalf("%s: status = %v; want %v", when, got, want)
			}
		}
		if got["at"] == nil || got["at"] == "" {
			t.Fatalf("%s: status = %v; want the time it was decided", when, got)
		}
	}
	check("after the ledger")

	// The account now has funds, the record has expired, and the debit comes again: it stays
	// rejected, and the balance is untouched.
	_, credit, _ := s.post(t, "api-credit.json", `{"amount":5000,"reference":"invoice-1"}`)
	s.deliver(t, credit, 1)
	s.expireRecord(t, debit)
	s.deliver(t, debit, 2)
	check("after a redelivery past the record's retention")
	if _, body := s.get(t, "/accounts/acc-1001"); !strings.Contains(body, `"balance":5000`) {
		t.Fatalf("account = %s; want balance 5000", body)
	}
}

// A reference with a character beyond U+FFFF (SQS takes it; fauxqs and the outbox's escaping
// meet it on the way): after the ledger decided the movement and its outbox item expired, a
// retry is answered from the movement item, which the ledger updated, as the same movement:
// 202 with the same event id, not 422.
func TestLedger_a_retry_of_a_decided_movement_with_an_emoji_reference_is_the_same_movement(t *testing.T) {
	s := newSystem(t)
	body := `{"amount":5000,"reference":"invoice-🚀-1"}`
	status, id, _ := s.post(t, "api-credit.json", body)
	if status != http.StatusAccepted {
		t.Fatalf("credit = %d; want 202", status)
	}
	s.deliver(t, id, 1)
	// The outbox item, the first guard, is gone after its 7 days; the movement item answers.
	if _, err := s.db.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(s.app),
		Key: outbox.Key(sampleAccount, id)}); err != nil {
		t.Fatal(err)
	}
	if status, again, _ := s.post(t, "api-credit.json", body); status != http.StatusAccepted || again != id {
		t.Fatalf("retry after the ledger decided = %d (event %q); want 202 with event %s", status, again, id)
	}
}
